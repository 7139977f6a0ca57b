#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/hdf5/catalog.hpp"

namespace ckpt::backends::hdf5 {

// Where a serial file's dataset of slice shape lies in its tensor.
struct SliceOrigin {
  std::vector<std::uint64_t> global_shape;
  std::vector<std::uint64_t> offset;
};

// Serial files (file per rank: one process writes and reads each) store a tensor as a dataset of
// the shape of the slice their pieces hold, when they all hold the same slice, as frameworks
// store per-rank shards: the slice is then contiguous in the file, where the global shape would
// spread a column slice over strided runs and leave the rest of the file holes. Rewrites those
// pieces to offset 0 of a shape equal to their extent and returns each such dataset's origin (its
// attributes record it). Datasets whose pieces hold different slices (two TP ranks in one file),
// the raw-byte dataset and scalars keep their shapes.
std::map<std::string, SliceOrigin> localize(std::vector<DatasetPiece>& pieces);

// Records the origins in the definitions of the datasets they name.
void record_origins(FileContents& contents, const std::map<std::string, SliceOrigin>& origins);

}  // namespace ckpt::backends::hdf5
