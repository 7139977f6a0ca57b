#include "harness/formats/safetensors_header.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kLengthBytes = 8;

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 15> kDtypes{{
    {"BOOL", 1},
    {"U8", 1},
    {"I8", 1},
    {"F8_E5M2", 1},
    {"F8_E4M3", 1},
    {"I16", 2},
    {"U16", 2},
    {"F16", 2},
    {"BF16", 2},
    {"I32", 4},
    {"U32", 4},
    {"F32", 4},
    {"F64", 8},
    {"I64", 8},
    {"U64", 8},
}};

std::string known_dtypes() {
  std::string list;
  for (const auto& [name, bytes] : kDtypes) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

[[noreturn]] void fail(std::string_view file, std::string_view field, const std::string& problem) {
  throw SafetensorsError(fmt::format("{}: {}: {}", file, field, problem));
}

std::uint64_t read_le64(std::span<const std::byte> bytes) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | std::to_integer<std::uint64_t>(bytes[static_cast<std::size_t>(i)]);
  return value;
}

std::uint64_t unsigned_of(const nlohmann::json& value, std::string_view file,
                          const std::string& field) {
  if (!value.is_number_unsigned())
    fail(file, field, fmt::format("expected a non-negative integer, found {}", value.dump()));
  return value.get<std::uint64_t>();
}

SafetensorsTensor tensor_of(const std::string& name, const nlohmann::json& entry,
                            std::string_view file) {
  const std::string where = fmt::format("tensor \"{}\"", name);
  if (!entry.is_object())
    fail(file, where,
         fmt::format("expected an object {{dtype, shape, data_offsets}}, found {}",
                     entry.type_name()));
  SafetensorsTensor t;
  t.name = name;
  const auto dtype = entry.find("dtype");
  if (dtype == entry.end() || !dtype->is_string())
    fail(file, where + " field \"dtype\"", "missing or not a string");
  t.dtype = dtype->get<std::string>();
  const std::optional<std::uint64_t> element_bytes = safetensors_dtype_bytes(t.dtype);
  if (!element_bytes)
    fail(file, where + " field \"dtype\"",
         fmt::format("unknown dtype \"{}\" (known: {})", t.dtype, known_dtypes()));
  const auto shape = entry.find("shape");
  if (shape == entry.end() || !shape->is_array())
    fail(file, where + " field \"shape\"", "missing or not an array");
  std::uint64_t bytes = *element_bytes;
  for (const nlohmann::json& d : *shape) {
    t.shape.push_back(unsigned_of(d, file, where + " field \"shape\""));
    if (__builtin_mul_overflow(bytes, t.shape.back(), &bytes))
      fail(file, where + " field \"shape\"", "dtype x shape overflows 64 bits");
  }
  const auto offsets = entry.find("data_offsets");
  if (offsets == entry.end() || !offsets->is_array() || offsets->size() != 2) {
    fail(file, where + " field \"data_offsets\"", "missing or not an array [begin, end]");
  }
  t.begin = unsigned_of((*offsets)[0], file, where + " field \"data_offsets\"");
  t.end = unsigned_of((*offsets)[1], file, where + " field \"data_offsets\"");
  if (t.end < t.begin)
    fail(file, where + " field \"data_offsets\"",
         fmt::format("end {} is before begin {}", t.end, t.begin));
  if (t.end - t.begin != bytes) {
    fail(file, where + " field \"data_offsets\"",
         fmt::format("[{}, {}] holds {} bytes, but dtype {} x shape {} is {} bytes", t.begin, t.end,
                     t.end - t.begin, t.dtype, nlohmann::json(t.shape).dump(), bytes));
  }
  return t;
}

std::map<std::string, std::string> metadata_of(const nlohmann::json& entry, std::string_view file) {
  if (!entry.is_object())
    fail(file, "\"__metadata__\"",
         fmt::format("expected an object of strings, found {}", entry.type_name()));
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : entry.items()) {
    if (!value.is_string())
      fail(file, fmt::format("\"__metadata__\".\"{}\"", key),
           fmt::format("expected a string, found {}", value.dump()));
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

// The tensors must cover the data bytes exactly: sorted by offset, each starts where the last
// ended.
void check_coverage(std::vector<SafetensorsTensor>& tensors, std::uint64_t data_bytes,
                    std::string_view file) {
  std::sort(tensors.begin(), tensors.end(),
            [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
              return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
            });
  std::uint64_t next = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& t : tensors) {
    const std::string field = fmt::format("tensor \"{}\" field \"data_offsets\"", t.name);
    if (t.end > data_bytes) {
      fail(file, field,
           fmt::format("[{}, {}] is out of range: the file holds {} data bytes after its header",
                       t.begin, t.end, data_bytes));
    }
    if (t.begin < next)
      fail(file, field,
           fmt::format("[{}, {}] overlaps tensor \"{}\", which ends at {}", t.begin, t.end,
                       previous->name, next));
    if (t.begin > next) {
      fail(file, field,
           fmt::format("[{}, {}] leaves a gap of {} bytes after {} (tensors must be back to back)",
                       t.begin, t.end, t.begin - next,
                       previous ? "tensor \"" + previous->name + "\"" : "the header"));
    }
    next = t.end;
    previous = &t;
  }
  if (next != data_bytes) {
    fail(file, "data_offsets",
         fmt::format(
             "the tensors end at data byte {}, but the file holds {} data bytes after its header "
             "(truncated or trailing bytes)",
             next, data_bytes));
  }
}

}  // namespace

std::string_view safetensors_dtype(workloads::Dtype dtype) {
  switch (dtype) {
    case workloads::Dtype::fp8:
      return "F8_E4M3";
    case workloads::Dtype::bf16:
      return "BF16";
    case workloads::Dtype::fp16:
      return "F16";
    case workloads::Dtype::fp32:
      return "F32";
    case workloads::Dtype::fp64:
      return "F64";
    case workloads::Dtype::u8:
      return "U8";
  }
  throw std::logic_error("safetensors_dtype: unknown dtype");
}

bool safetensors_stored_before(const SafetensorsTensor& a, const SafetensorsTensor& b) {
  // kDtypes lists the names in the order of the package's Dtype enum.
  const auto rank = [](std::string_view name) {
    const auto it = std::find_if(kDtypes.begin(), kDtypes.end(),
                                 [name](const auto& known) { return known.first == name; });
    return it - kDtypes.begin();
  };
  const auto ra = rank(a.dtype);
  const auto rb = rank(b.dtype);
  return ra != rb ? ra > rb : a.name < b.name;
}

std::optional<std::uint64_t> safetensors_dtype_bytes(std::string_view name) {
  for (const auto& [known, bytes] : kDtypes) {
    if (known == name) return bytes;
  }
  return std::nullopt;
}

std::string encode_safetensors_header(const std::vector<SafetensorsTensor>& tensors,
                                      const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const SafetensorsTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {t.begin, t.end}}};
  }
  std::string json = header.dump();
  json.append((kLengthBytes - json.size() % kLengthBytes) % kLengthBytes, ' ');
  std::string bytes(kLengthBytes, '\0');
  for (std::size_t i = 0; i < kLengthBytes; ++i)
    bytes[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  return bytes + json;
}

SafetensorsHeader parse_safetensors_header(std::span<const std::byte> bytes,
                                           std::uint64_t file_size, std::string_view file) {
  if (bytes.size() < kLengthBytes || file_size < kLengthBytes) {
    fail(file, "header length",
         fmt::format("truncated: the file has {} bytes, the header length alone needs 8",
                     std::min<std::uint64_t>(bytes.size(), file_size)));
  }
  const std::uint64_t n = read_le64(bytes);
  if (n > kSafetensorsMaxHeaderBytes) {
    fail(file, "header length",
         fmt::format("{} bytes is over the {}-byte limit readers accept", n,
                     kSafetensorsMaxHeaderBytes));
  }
  if (n > file_size - kLengthBytes) {
    fail(file, "header length",
         fmt::format("{} bytes runs beyond the end of the file ({} bytes): truncated file or not "
                     "a safetensors file",
                     n, file_size));
  }
  if (n > bytes.size() - kLengthBytes) {
    fail(file, "header",
         fmt::format("truncated: {} of its {} bytes present", bytes.size() - kLengthBytes, n));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + kLengthBytes, n);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(file, "header JSON", e.what());
  }
  if (!json.is_object())
    fail(file, "header JSON",
         fmt::format("expected an object of tensors, found {}", json.type_name()));
  SafetensorsHeader header;
  header.header_bytes = kLengthBytes + n;
  for (const auto& [key, entry] : json.items()) {
    if (key == "__metadata__") {
      header.metadata = metadata_of(entry, file);
    } else {
      header.tensors.push_back(tensor_of(key, entry, file));
    }
  }
  check_coverage(header.tensors, file_size - header.header_bytes, file);
  return header;
}

SafetensorsHeader read_safetensors_header(std::uint64_t file_size,
                                          const SafetensorsByteReader& read,
                                          std::string_view file) {
  const std::string length = read(0, std::min(file_size, kLengthBytes));
  std::string bytes = length;
  if (length.size() == kLengthBytes) {
    const std::uint64_t n = read_le64(std::as_bytes(std::span(length)));
    if (n <= kSafetensorsMaxHeaderBytes && n <= file_size - kLengthBytes) {
      bytes += read(kLengthBytes, n);
      if (bytes.size() != kLengthBytes + n) fail(file, "header", "read failed before its end");
    }
  }
  return parse_safetensors_header(std::as_bytes(std::span(bytes)), file_size, file);
}

SafetensorsHeader read_safetensors_header(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (!in || ec)
    fail(file, "file", "cannot be opened: " + (ec ? ec.message() : std::string("open failed")));
  const auto read = [&in](std::uint64_t offset, std::uint64_t length) {
    std::string bytes(static_cast<std::size_t>(length), '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(bytes.data(), static_cast<std::streamsize>(length));
    bytes.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return bytes;
  };
  return read_safetensors_header(size, read, file);
}

}  // namespace ckpt::harness
