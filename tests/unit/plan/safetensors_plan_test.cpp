// The shapes a safetensors header records: a 0-d tensor keeps its empty shape, as torch and
// safetensors write one (Apertus's xIELU beta and eps); others keep theirs. Tensors split into
// files as save_pretrained splits them.
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

// save_pretrained(max_shard_size=40000) of a Llama with hidden 64, intermediate 128, two layers
// and 1000 words wrote these seven files (transformers 5.24, huggingface_hub 2.4): the
// embedding and lm_head over the limit each alone, at once, while the open file stays open.
TEST(SafetensorsFileSplit, SplitsAsSavePretrainedDid) {
  const std::vector<std::uint64_t> state_dict{
      128000,  // embed_tokens
      8192,   4096,  4096, 8192, 16384,
      16384,  16384, 128,  128,  // layer 0: q k v o gate up down norms
      8192,   4096,  4096, 8192, 16384,
      16384,  16384, 128,  128,  // layer 1
      128,                       // norm
      128000};                   // lm_head
  using Files = std::vector<std::vector<std::size_t>>;
  EXPECT_EQ(
      safetensors_file_split(state_dict, 40000),
      (Files{
          {0}, {1, 2, 3, 4}, {5, 6}, {7, 8, 9, 10, 11, 12}, {13, 14}, {20}, {15, 16, 17, 18, 19}}));
  EXPECT_EQ(safetensors_file_split(state_dict, 50'000'000'000).size(), 1u);
  EXPECT_EQ(safetensors_file_split({}, 40000).size(), 0u);
  // A file filled exactly to the limit stays one file.
  EXPECT_EQ(safetensors_file_split({20000, 20000, 1}, 40000), (Files{{0, 1}, {2}}));
}

}  // namespace
}  // namespace ckpt::harness
