// Under data.pattern = "trained" a tensor's data key names its content (state and element format)
// in its low bits, and every training iteration's key keeps them; other patterns' keys are the
// plain tensor keys.
#include <gtest/gtest.h>

#include "harness/memory/trained_words.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/plan/training_state.hpp"

namespace ckpt::harness {
namespace {

using workloads::Dtype;
using workloads::Shard;
using workloads::StateKind;

TEST(DataKey, TrainedKeysNameTheContentAndTrainingKeepsIt) {
  Shard s;
  s.name = "model.layers.0.mlp.up_proj.weight";
  s.state = StateKind::exp_avg_sq;
  s.dtype = Dtype::fp32;
  const std::uint64_t plain = tensor_data_key(s.name, s.state, 7);
  const std::uint64_t key = shard_data_key(s, 7, DataPattern::trained);
  EXPECT_EQ(key & 0xF, 0b1011u) << "fp32 (2) << 2 | exp_avg_sq (3)";
  EXPECT_EQ(key >> 4, plain >> 4);
  for (DataPattern p : {DataPattern::random, DataPattern::zeros, DataPattern::bf16})
    EXPECT_EQ(shard_data_key(s, 7, p), plain);
  for (std::int64_t iteration = 0; iteration < 5; ++iteration) {
    EXPECT_EQ(training_key(key, iteration) & 0xF, 0b1011u) << iteration;
    EXPECT_NE(training_key(key, iteration), training_key(key, iteration + 1));
  }
  EXPECT_EQ(training_key(key, -1), key);
}

TEST(DataKey, EveryStateAndFormatHasItsCode) {
  Shard s;
  s.name = "t";
  const std::pair<StateKind, unsigned> states[] = {{StateKind::weight, 0},
                                                   {StateKind::master, 1},
                                                   {StateKind::exp_avg, 2},
                                                   {StateKind::exp_avg_sq, 3}};
  const std::pair<Dtype, unsigned> formats[] = {
      {Dtype::bf16, 1}, {Dtype::fp32, 2}, {Dtype::fp16, 0}, {Dtype::fp8, 0}, {Dtype::fp64, 0}};
  for (const auto& [state, state_code] : states) {
    for (const auto& [dtype, format_code] : formats) {
      s.state = state;
      s.dtype = dtype;
      EXPECT_EQ(shard_data_key(s, 1, DataPattern::trained) & 0xF, (format_code << 2) | state_code);
    }
  }
}

}  // namespace
}  // namespace ckpt::harness
