// local_shapes: serial files store a tensor as a dataset of the slice their pieces hold, when
// they all hold one slice; the tensor's shape and the slice's offset become attributes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/hdf5/catalog.hpp"
#include "backends/hdf5/local_shapes.hpp"
#include "backends/hdf5/scaled_shapes.hpp"

namespace ckpt::backends::hdf5 {
namespace {

using Dims = std::vector<std::uint64_t>;

DatasetPiece fp32_piece(const std::string& name, Dims shape, Dims offset, Dims extent,
                        std::uint64_t begin, std::uint64_t end) {
  return DatasetPiece{name,  "fp32", 4, std::move(shape), std::move(offset), std::move(extent),
                      begin, end,    0};
}

TEST(Hdf5LocalShapes, OneSlicePerDatasetBecomesTheDataset) {
  std::vector<DatasetPiece> pieces{
      fp32_piece("proj", {6, 8}, {0, 4}, {6, 4}, 0, 10),  // two ZeRO ranges of one TP slice
      fp32_piece("proj", {6, 8}, {0, 4}, {6, 4}, 10, 24),
      fp32_piece("qkv", {8, 6}, {0, 0}, {2, 6}, 0, 12),  // two TP slices in one file
      fp32_piece("qkv", {8, 6}, {2, 0}, {2, 6}, 0, 12),
      fp32_piece("step", {}, {}, {}, 0, 1)};  // a scalar
  const auto origins = localize(pieces);
  ASSERT_EQ(origins.size(), 1u);
  EXPECT_EQ(origins.at("proj").global_shape, (Dims{6, 8}));
  EXPECT_EQ(origins.at("proj").offset, (Dims{0, 4}));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(pieces[i].global_shape, (Dims{6, 4}));
    EXPECT_EQ(pieces[i].offset, (Dims{0, 0}));
    EXPECT_EQ(pieces[i].extent, (Dims{6, 4}));
  }
  EXPECT_EQ(pieces[1].flat_begin, 10u);
  EXPECT_EQ(pieces[2].global_shape, (Dims{8, 6}));
  EXPECT_EQ(pieces[3].offset, (Dims{2, 0}));

  FileContents contents = contents_of("rank.h5", pieces, {});
  record_origins(contents, origins);
  ASSERT_EQ(contents.datasets.size(), 3u);  // proj, qkv, step
  EXPECT_EQ(contents.datasets[0].shape, (Dims{6, 4}));
  EXPECT_EQ(contents.datasets[0].global_shape, (Dims{6, 8}));
  EXPECT_EQ(contents.datasets[0].slice_offset, (Dims{0, 4}));
  EXPECT_TRUE(contents.datasets[1].global_shape.empty());
  EXPECT_EQ(deserialise(serialise(contents), "rank.h5").datasets, contents.datasets);
}

TEST(Hdf5LocalShapes, ScaledDownSlicesShrinkWhereTheSliceDivides) {
  // A row of 1,000 slices: the global 8000 rows do not matter once the slice is the dataset.
  std::vector<DatasetPiece> pieces{fp32_piece("w", {8000, 4}, {24, 0}, {8, 4}, 0, 8)};
  const auto origins = localize(pieces);
  FileContents contents = contents_of("rank.h5", pieces, {});
  record_origins(contents, origins);
  mark_shrinkable(contents, pieces, 4);
  shrink(contents, pieces);
  EXPECT_EQ(contents.datasets[0].shape, (Dims{2, 4}));
  EXPECT_EQ(pieces[0].extent, (Dims{2, 4}));
  EXPECT_EQ(pieces[0].flat_end, 8u);
}

}  // namespace
}  // namespace ckpt::backends::hdf5
