#include "backends/hdf5/local_shapes.hpp"

#include <set>

namespace ckpt::backends::hdf5 {

std::map<std::string, SliceOrigin> localize(std::vector<DatasetPiece>& pieces) {
  std::map<std::string, const DatasetPiece*> first;  // the first piece of each dataset
  std::set<std::string> keep;                        // datasets that keep their shapes
  for (const DatasetPiece& piece : pieces) {
    if (piece.name == kBytesDataset || piece.global_shape.empty()) keep.insert(piece.name);
    const auto [it, inserted] = first.try_emplace(piece.name, &piece);
    const DatasetPiece& seen = *it->second;
    if (!inserted && (seen.global_shape != piece.global_shape || seen.offset != piece.offset ||
                      seen.extent != piece.extent)) {
      keep.insert(piece.name);
    }
  }
  std::map<std::string, SliceOrigin> origins;
  for (const auto& [name, piece] : first) {
    if (!keep.contains(name))
      origins.emplace(name, SliceOrigin{piece->global_shape, piece->offset});
  }
  for (DatasetPiece& piece : pieces) {
    if (!origins.contains(piece.name)) continue;
    piece.global_shape = piece.extent;
    piece.offset.assign(piece.extent.size(), 0);
  }
  return origins;
}

void record_origins(FileContents& contents, const std::map<std::string, SliceOrigin>& origins) {
  for (DatasetDef& def : contents.datasets) {
    const auto found = origins.find(def.name);
    if (found == origins.end()) continue;
    def.global_shape = found->second.global_shape;
    def.slice_offset = found->second.offset;
  }
}

}  // namespace ckpt::backends::hdf5
