// scaled_shapes: which datasets of a scaled-down checkpoint shrink (leading dimension divided by
// model.scale), and where their pieces land — exact shapes and ranges, ZeRO ranges kept disjoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/hdf5/catalog.hpp"
#include "backends/hdf5/scaled_shapes.hpp"

namespace ckpt::backends::hdf5 {
namespace {

using Dims = std::vector<std::uint64_t>;

// A bf16 piece of dataset `name`: elements [begin, end) of the slice [offset, offset + extent).
DatasetPiece bf16_piece(const std::string& name, Dims shape, Dims offset, Dims extent,
                        std::uint64_t begin, std::uint64_t end, std::uint64_t memory_offset = 0) {
  return DatasetPiece{
      name, "bf16",       2, std::move(shape), std::move(offset), std::move(extent), begin,
      end,  memory_offset};
}

// The contents of `pieces` marked for `scale`, then shrunk; `pieces` shrink with them.
FileContents shrunk_contents(std::vector<DatasetPiece>& pieces, std::uint64_t scale) {
  FileContents contents = contents_of("f.h5", pieces, {});
  mark_shrinkable(contents, pieces, scale);
  shrink(contents, pieces);
  return contents;
}

TEST(Hdf5ScaledShapes, ScaleComesFromThePlanAttribute) {
  EXPECT_EQ(scale_of({{"scale", "64"}}), 64u);
  EXPECT_EQ(scale_of({{"model", "llama3-8b"}}), 1u);
  EXPECT_EQ(scale_of({{"scale", "0"}}), 1u);
  EXPECT_EQ(scale_of({{"scale", "4x"}}), 1u);
}

TEST(Hdf5ScaledShapes, WholeSlicesBecomeSlicesOfTheSmallerTensor) {
  // Column split of [8, 6] by TP 2, scale 4: a slice [8, 3] keeps 24 / 4 = 6 elements.
  std::vector<DatasetPiece> columns{bf16_piece("w", {8, 6}, {0, 3}, {8, 3}, 0, 6, 128)};
  const FileContents by_columns = shrunk_contents(columns, 4);
  ASSERT_EQ(by_columns.datasets.size(), 1u);
  EXPECT_EQ(by_columns.datasets[0].shape, (Dims{2, 6}));
  EXPECT_EQ(by_columns.datasets[0].slice, (Dims{2, 3}));
  EXPECT_EQ(by_columns.datasets[0].shrink, 4u);
  EXPECT_EQ(by_columns.datasets[0].calls, 1u);
  EXPECT_EQ(columns[0].global_shape, (Dims{2, 6}));
  EXPECT_EQ(columns[0].offset, (Dims{0, 3}));
  EXPECT_EQ(columns[0].extent, (Dims{2, 3}));
  EXPECT_EQ(columns[0].flat_begin, 0u);
  EXPECT_EQ(columns[0].flat_end, 6u);
  EXPECT_EQ(columns[0].memory_offset, 128u);

  // Row split of [8, 6] by TP 2, scale 2: the second slice [4, 6] at row 4 keeps 12 elements.
  std::vector<DatasetPiece> rows{bf16_piece("w", {8, 6}, {4, 0}, {4, 6}, 0, 12)};
  const FileContents by_rows = shrunk_contents(rows, 2);
  EXPECT_EQ(by_rows.datasets[0].shape, (Dims{4, 6}));
  EXPECT_EQ(rows[0].offset, (Dims{2, 0}));
  EXPECT_EQ(rows[0].extent, (Dims{2, 6}));
  EXPECT_EQ(rows[0].flat_end, 12u);
}

TEST(Hdf5ScaledShapes, ZeroRangesStayDisjointInsideTheSmallerSlice) {
  // Every split of a [8, 6] slice (48 elements) into three ZeRO ranges whose pieces keep at least
  // 2 elements at scale 4 (max(1, n / 4) each, as the harness shortens them).
  const std::uint64_t scale = 4;
  int checked = 0;
  for (std::uint64_t a = 8; a <= 40; ++a) {
    for (std::uint64_t b = a + 8; b + 8 <= 48; ++b) {
      const std::uint64_t bounds[4] = {0, a, b, 48};
      std::vector<DatasetPiece> pieces;
      for (int k = 0; k < 3; ++k) {
        const std::uint64_t kept = std::max<std::uint64_t>(1, (bounds[k + 1] - bounds[k]) / scale);
        pieces.push_back(bf16_piece("z", {8, 6}, {0, 0}, {8, 6}, bounds[k], bounds[k] + kept));
      }
      const FileContents contents = shrunk_contents(pieces, scale);
      ASSERT_EQ(contents.datasets[0].shape, (Dims{2, 6}));
      for (int k = 0; k < 3; ++k) {
        EXPECT_LE(pieces[k].flat_end, 12u) << a << " " << b;
        if (k > 0) {
          EXPECT_LE(pieces[k - 1].flat_end, pieces[k].flat_begin) << a << " " << b;
        }
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 325);
}

TEST(Hdf5ScaledShapes, InexactDatasetsKeepTheirGlobalShapes) {
  std::vector<DatasetPiece> pieces{
      bf16_piece("odd_rows", {6, 4}, {0, 0}, {6, 4}, 0, 6),   // 6 rows do not divide by 4
      bf16_piece("odd_slice", {8, 4}, {0, 0}, {2, 4}, 0, 2),  // the slice's 2 rows do not
      bf16_piece("tiny", {8, 4}, {0, 0}, {8, 4}, 0, 1),  // 1 element may stand for fewer than 4
      bf16_piece("tiny", {8, 4}, {0, 0}, {8, 4}, 1, 9),  // ... so its exact partner stays too
      bf16_piece("fine", {8, 4}, {0, 0}, {8, 4}, 0, 8)};
  const std::vector<DatasetPiece> before = pieces;
  const FileContents contents = shrunk_contents(pieces, 4);
  ASSERT_EQ(contents.datasets.size(), 4u);  // sorted: fine, odd_rows, odd_slice, tiny
  EXPECT_EQ(contents.datasets[0].shape, (Dims{2, 4}));
  EXPECT_EQ(contents.datasets[1].shape, (Dims{6, 4}));
  EXPECT_EQ(contents.datasets[2].shape, (Dims{8, 4}));
  EXPECT_EQ(contents.datasets[3].shape, (Dims{8, 4}));
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(pieces[i].global_shape, before[i].global_shape) << i;
    EXPECT_EQ(pieces[i].extent, before[i].extent) << i;
    EXPECT_EQ(pieces[i].flat_begin, before[i].flat_begin) << i;
    EXPECT_EQ(pieces[i].flat_end, before[i].flat_end) << i;
  }
  EXPECT_EQ(pieces[4].extent, (Dims{2, 4}));
}

TEST(Hdf5ScaledShapes, ScaleOneAndRawBytesNeverShrink) {
  std::vector<DatasetPiece> pieces{bf16_piece("w", {8, 6}, {0, 0}, {8, 6}, 0, 48)};
  EXPECT_EQ(shrunk_contents(pieces, 1).datasets[0].shape, (Dims{8, 6}));
  FilePlan raw;
  raw.extents = {Extent{0, 0, 64}, Extent{64, 64, 64}};
  std::vector<DatasetPiece> bytes = pieces_of(raw);
  EXPECT_EQ(shrunk_contents(bytes, 4).datasets[0].shape, (Dims{128}));
}

TEST(Hdf5ScaledShapes, ProcessesAgreeOnTheSmallestShrink) {
  FileContents exact{{DatasetDef{.name = "w",
                                 .dtype = "bf16",
                                 .element_bytes = 2,
                                 .shape = {8, 6},
                                 .slice = {4, 6},
                                 .shrink = 4}},
                     {}};
  FileContents inexact = exact;
  inexact.datasets[0].shrink = 1;
  EXPECT_EQ(merge("f.h5", {exact, exact}).datasets[0].shrink, 4u);
  EXPECT_EQ(merge("f.h5", {exact, inexact}).datasets[0].shrink, 1u);
  EXPECT_EQ(deserialise(serialise(exact), "f.h5").datasets, exact.datasets);
}

}  // namespace
}  // namespace ckpt::backends::hdf5
