// The shapes a safetensors header records: a 0-d tensor keeps its empty shape, as torch and
// safetensors write one (Apertus's xIELU beta and eps); others keep theirs.
#include "harness/plan/safetensors_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ckpt::harness {
namespace {

using Dims = std::vector<std::uint64_t>;

workloads::Shard whole(std::vector<std::int64_t> shape) {
  workloads::Shard s;
  s.global_shape = shape;
  s.offset.assign(shape.size(), 0);
  s.extent = shape;
  s.flat_end = 1;
  for (const std::int64_t d : shape) s.flat_end *= d;
  return s;
}

TEST(SafetensorsShape, AScalarKeepsItsEmptyShapeAndAOneElementVectorItsOneDimension) {
  EXPECT_EQ(safetensors_shape(whole({}), 1), Dims{});
  EXPECT_EQ(safetensors_shape(whole({1}), 1), Dims{1});
}

TEST(SafetensorsShape, FewerElementsThanTheSliceShortenTheLeadingDimensionOrFlatten) {
  EXPECT_EQ(safetensors_shape(whole({4, 3}), 12), (Dims{4, 3}));
  EXPECT_EQ(safetensors_shape(whole({4, 3}), 6), (Dims{2, 3}));
  EXPECT_EQ(safetensors_shape(whole({4, 3}), 5), Dims{5});
}

}  // namespace
}  // namespace ckpt::harness
