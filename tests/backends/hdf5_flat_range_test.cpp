// flat_range_blocks: the blocks a piece's flat range of an n-D slice becomes, checked against
// the elements the range names, for every range of a few small slices.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "backends/hdf5/flat_range.hpp"

namespace ckpt::backends::hdf5 {
namespace {

using Index = std::vector<std::uint64_t>;

// Row-major index of `point` in `shape`.
std::uint64_t flat(const Index& shape, const Index& point) {
  std::uint64_t index = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + point[d];
  return index;
}

// The dataset elements (row-major indices) a block covers, in row-major order.
std::vector<std::uint64_t> elements_of(const Index& shape, const Block& block) {
  std::vector<std::uint64_t> out;
  Index point = block.start;
  for (std::uint64_t n = 0; n < block.elements(); ++n) {
    out.push_back(flat(shape, point));
    for (std::size_t d = point.size(); d-- > 0;) {
      if (++point[d] < block.start[d] + block.count[d]) break;
      point[d] = block.start[d];
    }
  }
  return out;
}

// The dataset elements of flat range [begin, end) of the slice, in the slice's row-major order.
std::vector<std::uint64_t> expected_elements(const Index& shape, const Index& offset,
                                             const Index& extent, std::uint64_t begin,
                                             std::uint64_t end) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t k = begin; k < end; ++k) {
    Index point(shape.size());
    std::uint64_t rest = k;
    for (std::size_t d = shape.size(); d-- > 0;) {
      point[d] = offset[d] + rest % extent[d];
      rest /= extent[d];
    }
    out.push_back(flat(shape, point));
  }
  return out;
}

void check_every_range(const Index& shape, const Index& offset, const Index& extent) {
  std::uint64_t total = 1;
  for (const std::uint64_t e : extent) total *= e;
  for (std::uint64_t begin = 0; begin <= total; ++begin) {
    for (std::uint64_t end = begin; end <= total; ++end) {
      const std::vector<Block> blocks = flat_range_blocks(offset, extent, begin, end);
      ASSERT_LE(blocks.size(), 2 * shape.size() - 1) << begin << ".." << end;
      std::vector<std::uint64_t> covered;
      for (const Block& block : blocks) {
        ASSERT_GT(block.elements(), 0u);
        const std::vector<std::uint64_t> part = elements_of(shape, block);
        ASSERT_TRUE(covered.empty() || part.front() > covered.back())
            << "blocks in row-major order, disjoint";
        covered.insert(covered.end(), part.begin(), part.end());
      }
      ASSERT_EQ(covered, expected_elements(shape, offset, extent, begin, end))
          << begin << ".." << end;
    }
  }
}

TEST(Hdf5FlatRange, EveryRangeOfA1DSlice) {
  check_every_range({20}, {3}, {11});
}

TEST(Hdf5FlatRange, EveryRangeOfA2DSliceAlongEitherDimension) {
  check_every_range({8, 6}, {2, 0}, {4, 6});  // TP along dim 0
  check_every_range({6, 8}, {0, 4}, {6, 4});  // TP along dim 1
}

TEST(Hdf5FlatRange, EveryRangeOfA3DAndA4DSlice) {
  check_every_range({3, 5, 4}, {1, 1, 0}, {2, 3, 4});
  check_every_range({2, 3, 2, 3}, {0, 1, 0, 1}, {2, 2, 2, 2});
}

TEST(Hdf5FlatRange, WholeSliceIsOneBlockAndEmptyRangeNone) {
  EXPECT_EQ(flat_range_blocks({2, 0}, {4, 6}, 0, 24), (std::vector<Block>{{{2, 0}, {4, 6}}}));
  EXPECT_TRUE(flat_range_blocks({2, 0}, {4, 6}, 5, 5).empty());
  EXPECT_EQ(flat_range_blocks({}, {}, 0, 1).size(), 1u) << "a scalar's one element";
}

TEST(Hdf5FlatRange, MidRowRangeIsHeadRowsTail) {
  // [0:8, 0:6], elements [7, 33): row 1 from column 1, rows 2-4, row 5 up to column 3.
  EXPECT_EQ(flat_range_blocks({0, 0}, {8, 6}, 7, 33),
            (std::vector<Block>{{{1, 1}, {1, 5}}, {{2, 0}, {3, 6}}, {{5, 0}, {1, 3}}}));
}

TEST(Hdf5FlatRange, RangeOutsideTheSliceIsRejected) {
  EXPECT_THROW(flat_range_blocks({0, 0}, {2, 3}, 0, 7), std::invalid_argument);
  EXPECT_THROW(flat_range_blocks({0, 0}, {2, 3}, 4, 2), std::invalid_argument);
  EXPECT_THROW(flat_range_blocks({0}, {2, 3}, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace ckpt::backends::hdf5
