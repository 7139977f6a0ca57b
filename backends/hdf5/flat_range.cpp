#include "backends/hdf5/flat_range.hpp"

#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ckpt::backends::hdf5 {
namespace {

std::uint64_t product(const std::vector<std::uint64_t>& values, std::size_t from) {
  return std::accumulate(values.begin() + static_cast<std::ptrdiff_t>(from), values.end(),
                         std::uint64_t{1}, std::multiplies<>());
}

// Appends the blocks of [begin, end) (flat positions relative to the sub-box of dimensions
// [dim, n) whose coordinates in dimensions [0, dim) are `prefix`).
class Decomposer {
 public:
  Decomposer(const std::vector<std::uint64_t>& offset, const std::vector<std::uint64_t>& extent)
      : offset_(offset), extent_(extent) {}

  void add(std::size_t dim, std::vector<std::uint64_t>& prefix, std::uint64_t begin,
           std::uint64_t end) {
    if (begin >= end) return;
    const std::uint64_t inner = product(extent_, dim + 1);  // elements per index of `dim`
    std::uint64_t first_row = begin / inner;
    const std::uint64_t last_row = end / inner;  // exclusive of a partial tail row
    const std::uint64_t head = begin % inner;
    const std::uint64_t tail = end % inner;
    if (first_row == last_row) {  // inside one index of `dim`
      descend(dim, prefix, first_row, head, tail);
      return;
    }
    if (head != 0) descend(dim, prefix, first_row++, head, inner);
    if (first_row < last_row) whole_rows(dim, prefix, first_row, last_row - first_row);
    if (tail != 0) descend(dim, prefix, last_row, 0, tail);
  }

  std::vector<Block> take() { return std::move(blocks_); }

 private:
  void descend(std::size_t dim, std::vector<std::uint64_t>& prefix, std::uint64_t row,
               std::uint64_t begin, std::uint64_t end) {
    if (dim + 1 == extent_.size()) {  // innermost: the range itself
      Block block{prefix, std::vector<std::uint64_t>(dim, 1)};
      block.start.push_back(offset_[dim] + begin);
      block.count.push_back(end - begin);
      blocks_.push_back(std::move(block));
      return;
    }
    prefix.push_back(offset_[dim] + row);
    add(dim + 1, prefix, begin, end);
    prefix.pop_back();
  }

  void whole_rows(std::size_t dim, const std::vector<std::uint64_t>& prefix, std::uint64_t row,
                  std::uint64_t rows) {
    Block block{prefix, std::vector<std::uint64_t>(dim, 1)};
    block.start.push_back(offset_[dim] + row);
    block.count.push_back(rows);
    for (std::size_t d = dim + 1; d < extent_.size(); ++d) {
      block.start.push_back(offset_[d]);
      block.count.push_back(extent_[d]);
    }
    blocks_.push_back(std::move(block));
  }

  const std::vector<std::uint64_t>& offset_;
  const std::vector<std::uint64_t>& extent_;
  std::vector<Block> blocks_;
};

}  // namespace

std::uint64_t Block::elements() const {
  return product(count, 0);
}

std::vector<Block> flat_range_blocks(const std::vector<std::uint64_t>& offset,
                                     const std::vector<std::uint64_t>& extent,
                                     std::uint64_t flat_begin, std::uint64_t flat_end) {
  if (offset.size() != extent.size()) {
    throw std::invalid_argument("slice offset has " + std::to_string(offset.size()) +
                                " dimensions, extent " + std::to_string(extent.size()));
  }
  const std::uint64_t total = product(extent, 0);
  if (flat_begin > flat_end || flat_end > total) {
    throw std::invalid_argument("flat range [" + std::to_string(flat_begin) + ", " +
                                std::to_string(flat_end) + ") leaves the slice of " +
                                std::to_string(total) + " elements");
  }
  if (flat_begin == flat_end) return {};
  if (extent.empty()) return {Block{}};  // a scalar: its one element
  Decomposer decomposer(offset, extent);
  std::vector<std::uint64_t> prefix;
  decomposer.add(0, prefix, flat_begin, flat_end);
  return decomposer.take();
}

}  // namespace ckpt::backends::hdf5
