#include "harness/formats/torch_save_size.hpp"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

namespace ckpt::harness {
namespace {

// Bytes pickle (protocol 2) gives a non-negative int: BININT1, BININT2, BININT, else LONG1
// (opcode, length byte, the two's-complement bytes).
std::uint64_t int_bytes(std::uint64_t value) {
  if (value <= 0xff) return 2;
  if (value <= 0xffff) return 3;
  if (value < (std::uint64_t{1} << 31)) return 5;
  return 2 + static_cast<std::uint64_t>(std::bit_width(value)) / 8 + 1;
}

// A tuple of these ints, memoized (BINPUT) unless empty; four or more need MARK ... TUPLE.
std::uint64_t tuple_bytes(const std::vector<std::uint64_t>& values) {
  if (values.empty()) return 1;  // EMPTY_TUPLE
  std::uint64_t bytes = values.size() >= 4 ? 2 : 1;
  for (const std::uint64_t v : values) bytes += int_bytes(v);
  return bytes + 2;
}

// The pickle's bytes other than the size, the stride and the element count: measured per
// storage class, whose name the GLOBAL opcode spells (BFloat16Storage, FloatStorage, ...); the
// float8 storage pickles its dtype besides.
std::uint64_t fixed_pickle_bytes(workloads::Dtype dtype) {
  switch (dtype) {
    case workloads::Dtype::bf16:
      return 141;
    case workloads::Dtype::fp16:
      return 137;
    case workloads::Dtype::fp32:
      return 138;
    case workloads::Dtype::fp64:
      return 139;
    case workloads::Dtype::fp8:
      return 171;
    case workloads::Dtype::u8:  // ByteStorage: as HalfStorage, a name of the same length
      return 137;
  }
  return 141;
}

constexpr std::uint64_t kAlignment = 64;      // torch's kFieldAlignment
constexpr std::uint64_t kLocalHeader = 30;    // MZ_ZIP_LOCAL_DIR_HEADER_SIZE
constexpr std::uint64_t kCentralHeader = 46;  // MZ_ZIP_CENTRAL_DIR_HEADER_SIZE
constexpr std::uint64_t kZip32Limit = 0xffffffff;
// The zip64 end-of-directory record and its locator, and the end-of-directory record.
constexpr std::uint64_t kArchiveEnd = 56 + 20 + 22;
// The records before data/0: data.pkl, .format_version, .storage_alignment and byteorder.
constexpr std::size_t kStoragesFrom = 4;

}  // namespace

std::uint64_t torch_save_pickle_bytes(const std::vector<std::int64_t>& shape,
                                      workloads::Dtype dtype) {
  std::vector<std::uint64_t> size;
  std::vector<std::uint64_t> stride(shape.size());
  std::uint64_t elements = 1;
  std::uint64_t step = 1;
  // Contiguous strides count a dimension of 0 as 1, as torch computes them.
  for (std::size_t d = shape.size(); d-- > 0;) {
    stride[d] = step;
    step *= std::max<std::uint64_t>(static_cast<std::uint64_t>(shape[d]), 1);
    elements *= static_cast<std::uint64_t>(shape[d]);
  }
  for (const std::int64_t n : shape) size.push_back(static_cast<std::uint64_t>(n));
  return fixed_pickle_bytes(dtype) + tuple_bytes(size) + tuple_bytes(stride) + int_bytes(elements);
}

TorchSaveArchive torch_save_archive(std::string_view archive, std::uint64_t pickle_bytes,
                                    const std::vector<std::uint64_t>& storage_bytes) {
  TorchSaveArchive out;
  std::vector<std::pair<std::string, std::uint64_t>> records = {{"data.pkl", pickle_bytes},
                                                                {".format_version", 1},
                                                                {".storage_alignment", 2},
                                                                {"byteorder", 6}};
  for (std::size_t i = 0; i < storage_bytes.size(); ++i)
    records.emplace_back("data/" + std::to_string(i), storage_bytes[i]);
  records.emplace_back("version", 2);
  records.emplace_back(".data/serialization_id", 40);
  std::uint64_t cursor = 0;
  std::uint64_t central = 0;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const auto& [name, bytes] = records[r];
    const std::uint64_t name_bytes = archive.size() + 1 + name.size();
    // The padding field ("FB", its length, the pad), plus zip64's sizes and offset when needed.
    std::uint64_t start = cursor + kLocalHeader + name_bytes + 4;
    std::uint64_t central_extra = 0;
    if (bytes >= kZip32Limit || cursor >= kZip32Limit) {
      start += 4 + (bytes >= kZip32Limit ? 16 : 0) + (cursor >= kZip32Limit ? 8 : 0);
      central_extra = 4 + (bytes >= kZip32Limit ? 16 : 0) + (cursor >= kZip32Limit ? 8 : 0);
    }
    const std::uint64_t data_start = (start + kAlignment - 1) / kAlignment * kAlignment;
    if (r >= kStoragesFrom && r < kStoragesFrom + storage_bytes.size())
      out.storage_offsets.push_back(data_start);
    // An empty record has no data descriptor.
    const std::uint64_t descriptor = bytes == 0 ? 0 : bytes >= kZip32Limit ? 24 : 16;
    cursor = data_start + bytes + descriptor;
    central += kCentralHeader + name_bytes + central_extra;
  }
  out.bytes = cursor + central + kArchiveEnd;
  return out;
}

std::uint64_t torch_save_archive_bytes(std::string_view archive, std::uint64_t pickle_bytes,
                                       const std::vector<std::uint64_t>& storage_bytes) {
  return torch_save_archive(archive, pickle_bytes, storage_bytes).bytes;
}

TorchSaveArchive torch_save_tensor_archive(const std::vector<std::int64_t>& shape,
                                           workloads::Dtype dtype, std::string_view archive) {
  std::uint64_t data = static_cast<std::uint64_t>(workloads::dtype_bytes(dtype));
  for (const std::int64_t n : shape) data *= static_cast<std::uint64_t>(n);
  return torch_save_archive(archive, torch_save_pickle_bytes(shape, dtype), {data});
}

std::uint64_t torch_save_tensor_bytes(const std::vector<std::int64_t>& shape,
                                      workloads::Dtype dtype, std::string_view archive) {
  return torch_save_tensor_archive(shape, dtype, archive).bytes;
}

}  // namespace ckpt::harness
