#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/hdf5/catalog.hpp"

namespace ckpt::backends::hdf5 {

// Dense datasets for scaled-down checkpoints.
//
// With model.scale = s > 1 the harness keeps the first max(1, n / s) elements of each piece of n
// elements. Declared at their global shapes, the datasets would be filled to 1/s: a sparse file
// s times its data, whose pieces lie far apart on disk. Where it is exact, a dataset is instead
// declared with its leading dimension divided by s and each piece moves into it: the slice's
// leading offset and extent divide by s, the flat range starts at flat_begin / s and keeps its
// length. For a whole slice that is the slice of the smaller tensor; ZeRO ranges of one slice
// stay disjoint (floor(a / s) + floor(b / s) <= floor((a + b) / s)).
//
// Exact means, for every piece of the dataset (of every process of a shared file): the leading
// dimension of the shape, the slice offset and the slice extent divide by s, and the piece keeps
// at least 2 elements (a piece of 1 may stand for fewer than s, whose neighbour could then
// overlap it). Other datasets keep their global shapes.

// The `scale` attribute of a plan (IoPlan::attributes), 1 when absent or not a positive number.
std::uint64_t scale_of(const std::map<std::string, std::string>& attributes);

// Sets DatasetDef::shrink of each dataset of `contents` to `scale` where every piece of it in
// `pieces` moves exactly, to 1 elsewhere.
void mark_shrinkable(FileContents& contents, const std::vector<DatasetPiece>& pieces,
                     std::uint64_t scale);

// Applies each dataset's `shrink` (after the processes agreed on it) to its shape and slice and to
// the pieces that name it, and recounts the dataset's transfer calls of this process. Returns
// whether any dataset shrank (the processes of a shared file must then agree on calls anew).
bool shrink(FileContents& contents, std::vector<DatasetPiece>& pieces);

}  // namespace ckpt::backends::hdf5
