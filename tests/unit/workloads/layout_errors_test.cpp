// Every impossible model / parallelism combination is refused with a SpecError whose key is
// the setting to change and whose message says what would work.
#include <gtest/gtest.h>

#include <string>

#include "harness/common/config_error.hpp"
#include "harness/models/model_zoo.hpp"
#include "tests/unit/workloads/spec_error_expect.hpp"
#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

TEST(LayoutErrors, HeadsNotDivisibleByTp) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.tp = 3}, {}); }, "tp",
                    {"num_attention_heads (32) is not divisible by tp (3)",
                     "valid tp for llama3-8b: 1, 2, 4, 8"});
}

TEST(LayoutErrors, KvHeadsNotDivisibleByTp) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3-70b"), {.tp = 16}, {}); }, "tp",
                    {"num_key_value_heads (8) is not divisible by tp (16)", "does not replicate",
                     "valid tp for llama3-70b: 1, 2, 4, 8"});
}

TEST(LayoutErrors, IntermediateNotDivisibleByTp) {
  ModelSpec m = harness::zoo_model("llama3-8b");
  m.intermediate_size = 14335;
  expect_spec_error([&] { Layout(m, {.tp = 2}, {}); }, "tp", {"intermediate_size (14335)"});
}

TEST(LayoutErrors, LayersNotDivisibleByPpSuggestsUnevenSplit) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3.1-405b"), {.pp = 32}, {}); }, "pp",
                    {"num_hidden_layers (126) is not divisible by pp (32)",
                     "pp_first_stage_layers = 3 and pp_last_stage_layers = 3"});
}

TEST(LayoutErrors, MorePipelineStagesThanLayers) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.pp = 64}, {}); }, "pp",
                    {"every pipeline stage a layer"});
}

TEST(LayoutErrors, UnevenSplitThatDoesNotAddUp) {
  expect_spec_error(
      [] {
        Layout(harness::zoo_model("llama3-8b"),
               {.pp = 4, .pp_first_stage_layers = 5, .pp_last_stage_layers = 4}, {});
      },
      "pp_first_stage_layers", {"do not split evenly"});
  expect_spec_error(
      [] {
        Layout(harness::zoo_model("llama3-8b"),
               {.pp = 2, .pp_first_stage_layers = 30, .pp_last_stage_layers = 5}, {});
      },
      "pp_first_stage_layers", {"do not add up"});
  expect_spec_error(
      [] { Layout(harness::zoo_model("llama3-8b"), {.pp = 1, .pp_first_stage_layers = 4}, {}); },
      "pp_first_stage_layers", {"needs pp > 1"});
}

TEST(LayoutErrors, ExpertsNotDivisibleByEp) {
  expect_spec_error([] { Layout(harness::zoo_model("mixtral-8x7b"), {.dp = 3, .ep = 3}, {}); },
                    "ep", {"num_local_experts (8) is not divisible by ep (3)"});
}

TEST(LayoutErrors, DpNotDivisibleByEp) {
  expect_spec_error([] { Layout(harness::zoo_model("mixtral-8x7b"), {.dp = 2, .ep = 4}, {}); },
                    "ep", {"dp (2) is not divisible by ep (4)"});
}

TEST(LayoutErrors, EpOnADenseModel) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.dp = 2, .ep = 2}, {}); }, "ep",
                    {"needs an MoE model", "llama3-8b has no experts"});
}

TEST(LayoutErrors, ZeroAndNegativeSizes) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.tp = 0}, {}); }, "tp",
                    {"tp must be a positive integer (got 0)"});
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.dp = -4}, {}); }, "dp",
                    {"dp must be a positive integer (got -4)"});
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.vocab_divisor = 0}, {}); },
                    "vocab_divisor", {"positive"});
  ModelSpec m = harness::zoo_model("llama3-8b");
  m.hidden_size = 0;
  expect_spec_error([&] { Layout(m, {}, {}); }, "hidden_size",
                    {"hidden_size must be a positive integer (got 0)"});
  m = harness::zoo_model("llama3-8b");
  m.num_hidden_layers = -2;
  expect_spec_error([&] { Layout(m, {}, {}); }, "num_hidden_layers", {"got -2"});
}

TEST(LayoutErrors, ZeroStageOutOfRange) {
  expect_spec_error([] { Layout(harness::zoo_model("llama3-8b"), {.zero_stage = 4}, {}); }, "zero",
                    {"0, 1, 2 or 3 (got 4)"});
}

TEST(LayoutErrors, HeadsNotMultipleOfKvHeads) {
  ModelSpec m = harness::zoo_model("llama3-8b");
  m.num_key_value_heads = 5;
  expect_spec_error([&] { Layout(m, {}, {}); }, "num_key_value_heads",
                    {"not a multiple of num_key_value_heads (5)"});
}

TEST(LayoutErrors, RankOutsideTheWorld) {
  const Layout layout(harness::zoo_model("llama3-8b"), {.tp = 2, .dp = 2}, {});
  expect_spec_error([&] { (void)layout.shards(4); }, "rank",
                    {"rank 4 is outside the world of 4 ranks (0..3)"});
  expect_spec_error([&] { (void)layout.totals(-1); }, "rank", {"rank -1"});
}

TEST(LayoutErrors, UnknownZooModelSuggestsTheClosest) {
  try {
    (void)harness::zoo_model("lama3-8b");
    ADD_FAILURE() << "no error";
  } catch (const harness::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean `llama3-8b`?"), std::string::npos)
        << e.what();
  }
  try {
    (void)harness::zoo_model("gpt-neo-x-unrelated");
    ADD_FAILURE() << "no error";
  } catch (const harness::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ckptbench models"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ckpt::workloads
