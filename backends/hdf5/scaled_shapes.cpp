#include "backends/hdf5/scaled_shapes.hpp"

#include <charconv>
#include <functional>
#include <numeric>

#include "backends/hdf5/flat_range.hpp"

namespace ckpt::backends::hdf5 {
namespace {

std::uint64_t elements_of(const std::vector<std::uint64_t>& extent) {
  return std::accumulate(extent.begin(), extent.end(), std::uint64_t{1}, std::multiplies<>());
}

bool moves_exactly(const DatasetPiece& piece, std::uint64_t scale) {
  if (scale <= 1 || piece.global_shape.empty()) return false;
  if (piece.global_shape[0] % scale != 0 || piece.offset[0] % scale != 0 ||
      piece.extent[0] % scale != 0) {
    return false;
  }
  const std::uint64_t length = piece.flat_end - piece.flat_begin;
  return length >= 2 && piece.flat_begin / scale + length <= elements_of(piece.extent) / scale;
}

DatasetPiece shrunk(DatasetPiece piece, std::uint64_t shrink) {
  const std::uint64_t length = piece.flat_end - piece.flat_begin;
  piece.global_shape[0] /= shrink;
  piece.offset[0] /= shrink;
  piece.extent[0] /= shrink;
  piece.flat_begin /= shrink;
  piece.flat_end = piece.flat_begin + length;
  return piece;
}

}  // namespace

std::uint64_t scale_of(const std::map<std::string, std::string>& attributes) {
  const auto found = attributes.find("scale");
  if (found == attributes.end()) return 1;
  const std::string& text = found->second;
  std::uint64_t scale = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), scale);
  return error == std::errc() && end == text.data() + text.size() && scale > 0 ? scale : 1;
}

void mark_shrinkable(FileContents& contents, const std::vector<DatasetPiece>& pieces,
                     std::uint64_t scale) {
  std::map<std::string, bool> exact;
  for (const DatasetPiece& piece : pieces) {
    const auto [it, inserted] = exact.try_emplace(piece.name, true);
    it->second = it->second && !(piece.name == kBytesDataset) && moves_exactly(piece, scale);
  }
  for (DatasetDef& def : contents.datasets) {
    const auto found = exact.find(def.name);
    def.shrink = found != exact.end() && found->second && !def.raw_bytes ? scale : 1;
  }
}

bool shrink(FileContents& contents, std::vector<DatasetPiece>& pieces) {
  std::map<std::string, DatasetDef*> shrinking;
  for (DatasetDef& def : contents.datasets) {
    if (def.shrink <= 1) continue;
    def.shape[0] /= def.shrink;
    def.slice[0] /= def.shrink;
    def.calls = 0;
    shrinking[def.name] = &def;
  }
  for (DatasetPiece& piece : pieces) {
    const auto found = shrinking.find(piece.name);
    if (found == shrinking.end()) continue;
    piece = shrunk(std::move(piece), found->second->shrink);
    found->second->calls +=
        flat_range_blocks(piece.offset, piece.extent, piece.flat_begin, piece.flat_end).size();
  }
  return !shrinking.empty();
}

}  // namespace ckpt::backends::hdf5
