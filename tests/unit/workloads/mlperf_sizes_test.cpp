// Checkpoint sizes published by MLPerf Storage v2.0 (REFERENCE §4), under the same
// parallelism, within 0.5%.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"

namespace ckpt::workloads {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double checkpoint_gib(const std::string& model, const ParallelSpec& parallel) {
  return static_cast<double>(
             Layout(harness::zoo_model(model), parallel, StateSpec{}).checkpoint_bytes()) /
         kGiB;
}

void expect_within_half_percent(double actual, double published) {
  EXPECT_LE(std::abs(actual - published) / published, 0.005) << actual << " GiB vs " << published;
}

TEST(MlperfSizes, Llama3_8B_Tp1Dp8Zero3) {
  const ParallelSpec p{.tp = 1, .pp = 1, .dp = 8, .zero_stage = 3};
  expect_within_half_percent(checkpoint_gib("llama3-8b", p), 104.70);
  // Exactly 14 bytes per parameter: no vocabulary padding at TP 1 for 128256.
  EXPECT_EQ(Layout(harness::zoo_model("llama3-8b"), p, StateSpec{}).checkpoint_bytes(),
            8'030'261'248LL * 14);
}

TEST(MlperfSizes, Llama3_70B_Tp8Dp8Zero3) {
  expect_within_half_percent(
      checkpoint_gib("mlperf-llama3-70b", {.tp = 8, .pp = 1, .dp = 8, .zero_stage = 3}), 911.2);
}

TEST(MlperfSizes, Llama3_405B_Tp8Pp32Dp2Zero1) {
  // 126 layers over 32 stages: 3 on the first and last stage, 4 on each of the 30 others.
  const ParallelSpec p{.tp = 8,
                       .pp = 32,
                       .dp = 2,
                       .zero_stage = 1,
                       .pp_first_stage_layers = 3,
                       .pp_last_stage_layers = 3};
  expect_within_half_percent(checkpoint_gib("llama3.1-405b", p), 5292.0);
  EXPECT_EQ(Layout(harness::zoo_model("llama3.1-405b"), p, StateSpec{}).world_size(), 512);
}

TEST(PublishedSizes, Bloom176BWeights) {
  // BigScience: 329 GB of bf16 weights at TP4 PP12 DP8 (70 layers: 5 + 10×6 + 5).
  StateSpec weights;
  weights.scope = StateScope::weights;
  const Layout layout(
      harness::zoo_model("bloom-176b"),
      {.tp = 4, .pp = 12, .dp = 8, .pp_first_stage_layers = 5, .pp_last_stage_layers = 5}, weights);
  expect_within_half_percent(static_cast<double>(layout.checkpoint_bytes()) / kGiB, 329.0);
}

}  // namespace
}  // namespace ckpt::workloads
