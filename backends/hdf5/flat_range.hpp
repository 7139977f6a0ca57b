#pragma once

#include <cstdint>
#include <vector>

namespace ckpt::backends::hdf5 {

// A rectangular block of a dataset: start and count per dimension.
struct Block {
  std::vector<std::uint64_t> start;
  std::vector<std::uint64_t> count;

  std::uint64_t elements() const;
  bool operator==(const Block&) const = default;
};

// The elements [flat_begin, flat_end), in row-major order, of the box [offset, offset + extent)
// of a dataset, as at most 2n - 1 disjoint blocks (n = dimensions) in row-major order: a
// partial run up to the next boundary of each dimension, one block of whole rows, then partial
// runs down again. Their union in the dataset's row-major order is the range's order, which is
// how HDF5 pairs a selection with memory. Empty when the range is. Throws
// std::invalid_argument when offset and extent differ in length or the range leaves the box.
std::vector<Block> flat_range_blocks(const std::vector<std::uint64_t>& offset,
                                     const std::vector<std::uint64_t>& extent,
                                     std::uint64_t flat_begin, std::uint64_t flat_end);

}  // namespace ckpt::backends::hdf5
