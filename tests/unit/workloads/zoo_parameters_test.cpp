// Exact parameter and tensor counts of the zoo: published figures (REFERENCE §1, model cards)
// and, where none is published, an independent derivation written out here.
#include <gtest/gtest.h>

#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"

namespace ckpt::workloads {
namespace {

Layout weights_layout(const std::string& name, Naming naming = Naming::hf) {
  StateSpec state;
  state.scope = StateScope::weights;
  state.naming = naming;
  return Layout(harness::zoo_model(name), ParallelSpec{.vocab_divisor = 1}, state);
}

std::int64_t params(const std::string& name) {
  return weights_layout(name).parameters();
}

TEST(ZooParameters, PublishedCounts) {
  EXPECT_EQ(params("llama3-8b"), 8'030'261'248);
  EXPECT_EQ(params("llama3-70b"), 70'553'706'496);
  EXPECT_EQ(params("llama3.1-405b"), 405'853'388'800);
  EXPECT_EQ(params("mistral-7b"), 7'241'732'096);
  EXPECT_EQ(params("mixtral-8x7b"), 46'702'792'704);
  EXPECT_EQ(params("llama2-13b"), 13'015'864'320);
  EXPECT_EQ(params("llama2-7b"), 6'738'415'616);
  EXPECT_EQ(params("llama2-70b"), 68'976'648'192);
  EXPECT_EQ(params("qwen2-7b"), 7'615'616'512);
  EXPECT_EQ(params("bloom-176b"), 176'247'271'424);  // bigscience/bloom model card
  // The same figures as their config.json (the HfArchitectures tests derive them).
  EXPECT_EQ(params("gemma-2-9b"), 9'241'705'984);
  EXPECT_EQ(params("phi-3-mini"), 3'821'079'552);
  EXPECT_EQ(params("qwen1.5-moe-a2.7b"), 14'315'784'192);
  EXPECT_EQ(params("falcon-7b"), 6'921'720'704);
}

TEST(ZooParameters, Gpt3DerivedByHand) {
  // Per layer: qkv 3h² + 3h, proj h² + h, MLP 8h² + 4h + h, two LayerNorms 4h.
  const std::int64_t h = 12288;
  const std::int64_t layer = 12 * h * h + 13 * h;
  const std::int64_t expected = 96 * layer + 50257 * h + 2048 * h + 2 * h;
  EXPECT_EQ(params("gpt3-175b"), expected);
  EXPECT_EQ(expected, 174'604'259'328);
}

TEST(ZooParameters, MlperfOneTrillionDerivedByHand) {
  const std::int64_t h = 25872, f = 98304, head_dim = 25872 / 192;  // 134
  const std::int64_t q = 192 * head_dim, kv = 32 * head_dim;
  const std::int64_t layer = q * h + 2 * kv * h + h * q + 3 * h * f + 2 * h;
  EXPECT_EQ(params("mlperf-1t"), 128 * layer + 2 * 128256 * h + h);
}

TEST(ZooParameters, DeepSeekV3DerivedByHand) {
  const std::int64_t h = 7168;
  const std::int64_t attention =
      1536 * h + 1536 + 128 * 192 * 1536 + 576 * h + 512 + 128 * 256 * 512 + h * 128 * 128;
  const std::int64_t norms = 2 * h;
  const std::int64_t dense_mlp = 3 * h * 18432;
  const std::int64_t moe =
      257 * 3 * h * 2048 + 256 * h + 256;  // 256 routed + 1 shared, router, bias
  const std::int64_t expected =
      3 * (attention + norms + dense_mlp) + 58 * (attention + norms + moe) + 2 * 129280 * h + h;
  EXPECT_EQ(params("deepseek-v3"), expected);
  EXPECT_EQ(expected, 671'026'419'200);
}

TEST(ZooParameters, MegatronAndHfNamingCountTheSameBytes) {
  for (const auto& entry : harness::zoo_entries()) {
    const std::string name(entry.name);
    EXPECT_EQ(weights_layout(name, Naming::hf).checkpoint_bytes(),
              weights_layout(name, Naming::megatron).checkpoint_bytes())
        << name;
    EXPECT_EQ(weights_layout(name).checkpoint_bytes(), 2 * params(name)) << name;
  }
}

TEST(ZooTensors, HfCheckpointTensorCounts) {
  EXPECT_EQ(weights_layout("llama3-8b").totals(0).tensors, 9 * 32 + 3);  // 291, as in the HF index
  EXPECT_EQ(weights_layout("mixtral-8x7b").totals(0).tensors, 32 * (9 - 3 + 1 + 8 * 3) + 3);  // 995
  EXPECT_EQ(weights_layout("qwen2-7b").totals(0).tensors, 28 * 12 + 3);  // q/k/v biases
}

TEST(ZooTensors, EveryZooModelParsesAndValidates) {
  EXPECT_GE(harness::zoo_entries().size(), 12u);
  for (const auto& entry : harness::zoo_entries()) {
    EXPECT_EQ(harness::zoo_model(entry.name).name, entry.name);
  }
}

}  // namespace
}  // namespace ckpt::workloads
