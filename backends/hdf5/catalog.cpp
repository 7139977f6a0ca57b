#include "backends/hdf5/catalog.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "backends/hdf5/element_types.hpp"
#include "backends/hdf5/flat_range.hpp"

namespace ckpt::backends::hdf5 {
namespace {

constexpr std::uint64_t kChunkLimit = std::uint64_t{2} << 30;  // one chunk stays below 2 GiB

std::uint64_t product(const std::vector<std::uint64_t>& values) {
  return std::accumulate(values.begin(), values.end(), std::uint64_t{1}, std::multiplies<>());
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

[[noreturn]] void bad_piece(const std::string& path, const DatasetPiece& piece,
                            const std::string& why) {
  throw std::invalid_argument("hdf5: " + path + ", dataset " + piece.name + ": " + why);
}

void check_piece(const std::string& path, const DatasetPiece& piece, std::uint64_t memory_size) {
  if (piece.name.empty()) bad_piece(path, piece, "empty dataset name");
  const std::uint32_t element_bytes = element_bytes_of(piece.dtype);
  if (element_bytes == 0) bad_piece(path, piece, "unknown dtype `" + piece.dtype + "`");
  if (element_bytes != piece.element_bytes) {
    bad_piece(path, piece,
              piece.dtype + " has " + std::to_string(element_bytes) +
                  "-byte elements, the piece says " + std::to_string(piece.element_bytes));
  }
  const std::size_t rank = piece.global_shape.size();
  if (piece.offset.size() != rank || piece.extent.size() != rank) {
    bad_piece(path, piece, "shape, slice offset and slice extent differ in dimensions");
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (piece.offset[d] > piece.global_shape[d] ||
        piece.extent[d] > piece.global_shape[d] - piece.offset[d]) {
      bad_piece(path, piece,
                "slice at " + shape_text(piece.offset) + " of extent " + shape_text(piece.extent) +
                    " leaves the shape " + shape_text(piece.global_shape));
    }
  }
  if (piece.flat_begin > piece.flat_end || piece.flat_end > product(piece.extent)) {
    bad_piece(path, piece,
              "flat range [" + std::to_string(piece.flat_begin) + ", " +
                  std::to_string(piece.flat_end) + ") leaves the slice of " +
                  std::to_string(product(piece.extent)) + " elements");
  }
  if (piece.memory_offset > memory_size || piece.bytes() > memory_size - piece.memory_offset) {
    bad_piece(path, piece,
              "memory [" + std::to_string(piece.memory_offset) + ", +" +
                  std::to_string(piece.bytes()) + ") leaves the " + std::to_string(memory_size) +
                  "-byte buffer");
  }
}

// Folds `next` (the same dataset, from another piece or process) into `into`; returns why they
// disagree, or "".
std::string fold(DatasetDef& into, const DatasetDef& next) {
  if (into.dtype != next.dtype) return "dtype " + into.dtype + " vs " + next.dtype;
  if (into.raw_bytes != next.raw_bytes || into.shape.size() != next.shape.size()) {
    return "shape " + shape_text(into.shape) + " vs " + shape_text(next.shape);
  }
  if (into.raw_bytes) {
    into.shape[0] = std::max(into.shape[0], next.shape[0]);
  } else if (into.shape != next.shape) {
    return "shape " + shape_text(into.shape) + " vs " + shape_text(next.shape);
  }
  for (std::size_t d = 0; d < into.slice.size(); ++d)
    into.slice[d] = std::max(into.slice[d], next.slice[d]);
  into.needed = std::max(into.needed, next.needed);
  into.shrink = std::min(into.shrink, next.shrink);
  return "";
}

}  // namespace

std::vector<DatasetPiece> pieces_of(const FilePlan& file) {
  if (!file.datasets.empty()) return file.datasets;
  std::uint64_t end = file.file_size;
  for (const Extent& e : file.extents) end = std::max(end, e.file_offset + e.length);
  std::vector<DatasetPiece> pieces;
  for (const Extent& e : file.extents) {
    if (e.length == 0) continue;
    pieces.push_back(DatasetPiece{std::string(kBytesDataset),
                                  std::string(kBytesDtype),
                                  1,
                                  {end},
                                  {e.file_offset},
                                  {e.length},
                                  0,
                                  e.length,
                                  e.memory_offset});
  }
  return pieces;
}

void check_pieces(const std::string& path, const std::vector<DatasetPiece>& pieces,
                  std::uint64_t memory_size) {
  for (const DatasetPiece& piece : pieces) check_piece(path, piece, memory_size);
}

FileContents contents_of(const std::string& path, const std::vector<DatasetPiece>& pieces,
                         const std::map<std::string, std::string>& attributes) {
  std::map<std::string, DatasetDef> by_name;
  for (const DatasetPiece& piece : pieces) {
    const bool raw = piece.name == kBytesDataset && piece.dtype == kBytesDtype;
    DatasetDef def{
        piece.name,
        piece.dtype,
        piece.element_bytes,
        piece.global_shape,
        piece.extent,
        {},
        flat_range_blocks(piece.offset, piece.extent, piece.flat_begin, piece.flat_end).size(),
        raw,
        raw ? piece.offset[0] + piece.extent[0] : 0};
    const auto [it, inserted] = by_name.try_emplace(piece.name, def);
    if (inserted) continue;
    const std::string why = fold(it->second, def);
    if (!why.empty()) bad_piece(path, piece, "pieces disagree: " + why);
    it->second.calls += def.calls;
  }
  FileContents contents{{}, attributes};
  for (auto& [name, def] : by_name) contents.datasets.push_back(std::move(def));
  return contents;
}

FileContents merge(const std::string& path, const std::vector<FileContents>& all) {
  std::map<std::string, DatasetDef> by_name;
  std::map<std::string, std::string> attributes;
  for (const FileContents& contents : all) {
    for (const DatasetDef& def : contents.datasets) {
      const auto [it, inserted] = by_name.try_emplace(def.name, def);
      if (inserted) continue;
      const std::string why = fold(it->second, def);
      if (!why.empty())
        throw IoError("hdf5: " + path + ", dataset " + def.name + ": processes disagree: " + why);
      it->second.calls = std::max(it->second.calls, def.calls);
    }
    for (const auto& [key, value] : contents.attributes) {
      const auto [it, inserted] = attributes.try_emplace(key, value);
      if (!inserted && it->second != value) {
        throw IoError("hdf5: " + path + ": processes disagree on the attribute `" + key + "`: \"" +
                      it->second + "\" vs \"" + value + "\"");
      }
    }
  }
  FileContents merged{{}, std::move(attributes)};
  for (auto& [name, def] : by_name) merged.datasets.push_back(std::move(def));
  return merged;
}

void finish(FileContents& contents, Layout layout) {
  for (DatasetDef& def : contents.datasets) {
    def.chunk.clear();
    if (layout != Layout::chunked || def.shape.empty() || product(def.shape) == 0) continue;
    def.chunk = def.slice;
    for (std::size_t d = 0; d < def.chunk.size(); ++d)
      def.chunk[d] = std::clamp<std::uint64_t>(def.chunk[d], 1, def.shape[d]);
    for (std::size_t d = 0;
         d < def.chunk.size() && product(def.chunk) * def.element_bytes >= kChunkLimit; ++d) {
      const std::vector<std::uint64_t> inner_dims(
          def.chunk.begin() + static_cast<std::ptrdiff_t>(d) + 1, def.chunk.end());
      const std::uint64_t inner = product(inner_dims) * def.element_bytes;
      def.chunk[d] = inner < kChunkLimit ? std::min(def.chunk[d], (kChunkLimit - 1) / inner) : 1;
    }
  }
}

namespace {

class Writer {
 public:
  void number(std::uint64_t value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void text(const std::string& value) {
    number(value.size());
    bytes_ += value;
  }
  void numbers(const std::vector<std::uint64_t>& values) {
    number(values.size());
    for (const std::uint64_t value : values) number(value);
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}
  std::uint64_t number() {
    std::uint64_t value = 0;
    need(sizeof value);
    std::memcpy(&value, bytes_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string text() {
    const std::uint64_t size = number();
    need(size);
    std::string value = bytes_.substr(at_, size);
    at_ += size;
    return value;
  }
  std::vector<std::uint64_t> numbers() {
    const std::uint64_t count = number();
    need(count * sizeof(std::uint64_t));
    std::vector<std::uint64_t> values(count);
    for (std::uint64_t& value : values) value = number();
    return values;
  }

 private:
  void need(std::uint64_t size) const {
    if (size > bytes_.size() - at_)
      throw IoError("hdf5: " + path_ + ": truncated dataset list from another process");
  }
  const std::string& bytes_;
  const std::string& path_;
  std::size_t at_ = 0;
};

}  // namespace

std::string serialise(const FileContents& contents) {
  Writer out;
  out.number(contents.datasets.size());
  for (const DatasetDef& def : contents.datasets) {
    out.text(def.name);
    out.text(def.dtype);
    out.number(def.element_bytes);
    out.numbers(def.shape);
    out.numbers(def.slice);
    out.numbers(def.chunk);
    out.number(def.calls);
    out.number(def.raw_bytes ? 1 : 0);
    out.number(def.needed);
    out.number(def.shrink);
    out.numbers(def.global_shape);
    out.numbers(def.slice_offset);
  }
  out.number(contents.attributes.size());
  for (const auto& [key, value] : contents.attributes) {
    out.text(key);
    out.text(value);
  }
  return out.take();
}

FileContents deserialise(const std::string& bytes, const std::string& path) {
  Reader in(bytes, path);
  FileContents contents;
  contents.datasets.resize(in.number());
  for (DatasetDef& def : contents.datasets) {
    def.name = in.text();
    def.dtype = in.text();
    def.element_bytes = static_cast<std::uint32_t>(in.number());
    def.shape = in.numbers();
    def.slice = in.numbers();
    def.chunk = in.numbers();
    def.calls = in.number();
    def.raw_bytes = in.number() != 0;
    def.needed = in.number();
    def.shrink = in.number();
    def.global_shape = in.numbers();
    def.slice_offset = in.numbers();
  }
  for (std::uint64_t n = in.number(); n > 0; --n) {
    std::string key = in.text();
    contents.attributes[key] = in.text();
  }
  return contents;
}

}  // namespace ckpt::backends::hdf5
