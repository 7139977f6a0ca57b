// Inputs near 2^63 and sizes that would make `layout` or a dry run take minutes are refused
// with a SpecError naming the key and the largest value allowed; the largest real jobs fit.
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "harness/models/model_zoo.hpp"
#include "workloads/checked_math.hpp"
#include "workloads/layout.hpp"
#include "workloads/layout_summary.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

// Processor seconds of this process: the bounds below catch an algorithm that grows too fast
// without failing when other work slows the machine.
double cpu_seconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

// Runs `make`, expects a SpecError with exactly `key` and `message`.
template <typename Make>
void expect_exact_error(Make make, const std::string& key, const std::string& message) {
  try {
    make();
    ADD_FAILURE() << "no error; expected one for " << key;
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key(), key);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(LayoutBounds, HugeDpIsRefusedWithTheBound) {
  const double start = cpu_seconds();
  expect_exact_error([] { Layout(harness::zoo_model("llama3-8b"), {.dp = 1099511627776}, {}); },
                     "dp", "dp = 1099511627776 exceeds the largest value allowed, 1048576");
  EXPECT_LT(cpu_seconds() - start, 1.0);
}

TEST(LayoutBounds, WorldSizeIsBounded) {
  expect_exact_error(
      [] { Layout(harness::zoo_model("llama3-8b"), {.tp = 8, .pp = 32, .dp = 8192}, {}); }, "dp",
      "the world of tp × pp × dp = 8 × 32 × 8192 = 2097152 ranks exceeds the largest allowed, "
      "1048576 ranks; the largest dp allowed with tp = 8 and pp = 32 is 4096");
}

TEST(LayoutBounds, DegreesNearInt64MaxAreRefused) {
  expect_exact_error(
      [] { Layout(harness::zoo_model("llama3-8b"), {.tp = 4611686018427387904}, {}); }, "tp",
      "tp = 4611686018427387904 exceeds the largest value allowed, 16384");
  expect_exact_error(
      [] { Layout(harness::zoo_model("llama3-8b"), {.pp = 9223372036854775807}, {}); }, "pp",
      "pp = 9223372036854775807 exceeds the largest value allowed, 16384");
  expect_exact_error(
      [] { Layout(harness::zoo_model("llama3-8b"), {.vocab_divisor = 4611686018427387904}, {}); },
      "vocab_divisor",
      "vocab_divisor = 4611686018427387904 exceeds the largest value allowed, 65536");
  expect_exact_error(
      [] {
        Layout(harness::zoo_model("llama3-8b"),
               {.pp = 2,
                .pp_first_stage_layers = 4611686018427387904,
                .pp_last_stage_layers = 4611686018427387904},
               {});
      },
      "pp_first_stage_layers",
      "pp_first_stage_layers = 4611686018427387904 exceeds the largest value allowed, 32");
}

TEST(LayoutBounds, ModelDimensionsAreBounded) {
  ModelSpec m = harness::zoo_model("llama3-8b");
  m.num_hidden_layers = 1000000000000;
  expect_exact_error([&] { Layout(m, {}, {}); }, "num_hidden_layers",
                     "num_hidden_layers = 1000000000000 exceeds the largest value allowed, 16384");
  m = harness::zoo_model("llama3-8b");
  m.hidden_size = 4611686018427387904;
  expect_exact_error(
      [&] { Layout(m, {}, {}); }, "hidden_size",
      "hidden_size = 4611686018427387904 exceeds the largest value allowed, 1048576");
  m = harness::zoo_model("llama3-8b");
  m.vocab_size = 9223372036854775807;
  expect_exact_error(
      [&] { Layout(m, {}, {}); }, "vocab_size",
      "vocab_size = 9223372036854775807 exceeds the largest value allowed, 16777216");
  m = harness::zoo_model("llama3-8b");
  m.num_attention_heads = 1 << 20;
  expect_exact_error([&] { Layout(m, {}, {}); }, "num_attention_heads",
                     "num_attention_heads = 1048576 exceeds the largest value allowed, 16384");
  m = harness::zoo_model("mixtral-8x7b");
  m.num_local_experts = 1 << 30;
  expect_exact_error([&] { Layout(m, {}, {}); }, "num_local_experts",
                     "num_local_experts = 1073741824 exceeds the largest value allowed, 16384");
}

TEST(LayoutBounds, TensorCountIsBounded) {
  ModelSpec m = harness::zoo_model("deepseek-v3");
  m.num_local_experts = 16384;  // megatron names: two tensors an expert
  expect_exact_error(
      [&] { Layout(m, {}, {}); }, "num_local_experts",
      "num_local_experts = 16384 is too large: the model would have more than 262144 tensors; "
      "the largest num_local_experts allowed for this model is 2253");
  m = harness::zoo_model("llama3-8b");
  m.num_hidden_layers = 16384;  // 9 tensors a layer: 147,459 tensors fit
  EXPECT_EQ(Layout(m, {}, {.scope = StateScope::weights}).shards(0).size(), 147459u);
}

TEST(LayoutBounds, CheckpointBytesBeyondInt64AreRefused) {
  ModelSpec m = harness::zoo_model("mixtral-8x7b");
  m.hidden_size = 1 << 20;
  m.num_attention_heads = 16384;
  m.num_key_value_heads = 16384;
  m.intermediate_size = 1 << 22;
  m.num_local_experts = 2048;  // 196,672 tensors: within the tensor bound
  expect_exact_error(
      [&] { Layout(m, {}, {}); }, "num_local_experts",
      "num_local_experts = 2048 is too large: the checkpoint's size in bytes (14 bytes per "
      "parameter) "
      "overflows 64-bit arithmetic; the largest num_local_experts allowed for this model is 1560");
  m = harness::zoo_model("llama3-8b");
  m.hidden_size = 1 << 20;
  m.num_attention_heads = 16384;
  m.num_key_value_heads = 16384;
  m.intermediate_size = 1 << 22;
  m.vocab_size = 1 << 24;
  m.num_hidden_layers = 16384;
  expect_exact_error(
      [&] {
        Layout(m, {},
               {.weight_dtype = Dtype::fp64,
                .master_dtype = Dtype::fp64,
                .optimizer_dtype = Dtype::fp64});
      },
      "num_hidden_layers",
      "num_hidden_layers = 16384 is too large: the checkpoint's size in bytes (32 bytes per "
      "parameter) "
      "overflows 64-bit arithmetic; the largest num_hidden_layers allowed for this model is 16381");
}

TEST(LayoutBounds, Llama405bOn16kGpusStillLaysOutInSeconds) {
  const double start = cpu_seconds();
  const Layout layout(
      harness::zoo_model("llama3.1-405b"),
      {.tp = 8, .pp = 16, .dp = 128, .pp_first_stage_layers = 7, .pp_last_stage_layers = 7}, {});
  EXPECT_EQ(layout.world_size(), 16384);
  const WorldSummary summary = summarize(layout);
  EXPECT_EQ(summary.checkpoint_bytes, 5682299764736);
  EXPECT_EQ(summary.shards, 17204);
  EXPECT_LT(cpu_seconds() - start, 5.0);
}

TEST(LayoutBounds, LargestWorldSummarizesInSeconds) {
  const double start = cpu_seconds();
  const Layout layout(harness::zoo_model("llama3-8b"), {.dp = 1048576, .zero_stage = 3}, {});
  const WorldSummary summary = summarize(layout);
  EXPECT_EQ(summary.world_size, 1048576);
  EXPECT_EQ(summary.writing_ranks, 1048576);
  EXPECT_LT(cpu_seconds() - start, 20.0);
}

TEST(CheckedMath, OverflowNamesTheKeyAndTheLargestValue) {
  EXPECT_EQ(checked_mul(3, 4, "k", "x"), 12);
  EXPECT_EQ(checked_add(3, 4, "k", "x"), 7);
  expect_exact_error(
      [] { checked_mul(kInt64Max / 2 + 1, 2, "num_hidden_layers", "the size"); },
      "num_hidden_layers",
      "num_hidden_layers = 4611686018427387904 is too large: the size overflows 64-bit arithmetic; "
      "the largest value allowed here is 4611686018427387903");
  expect_exact_error([] { checked_add(kInt64Max, 1, "dp", "the sum"); }, "dp",
                     "dp = 9223372036854775807 is too large: the sum overflows 64-bit arithmetic; "
                     "the largest value allowed here is 9223372036854775806");
}

}  // namespace
}  // namespace ckpt::workloads
