// Concrete shards of real models: names, global shapes, tensor-parallel slices, ZeRO
// partitions, pipeline placement and dtypes, each checked against values worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"

namespace ckpt::workloads {
namespace {

using Shape = std::vector<std::int64_t>;

const Shard* find(const std::vector<Shard>& shards, const std::string& name) {
  const auto it =
      std::find_if(shards.begin(), shards.end(), [&](const Shard& s) { return s.name == name; });
  return it == shards.end() ? nullptr : &*it;
}

Layout layout_of(const char* model, const ParallelSpec& p, StateScope scope = StateScope::full) {
  StateSpec state;
  state.scope = scope;
  return Layout(harness::zoo_model(model), p, state);
}

TEST(LayoutShards, Llama3TensorParallelSlices) {
  const Layout layout = layout_of("llama3-8b", {.tp = 8, .pp = 4});
  EXPECT_EQ(layout.padded_vocab(), 129024);  // multiple of 128 × 8
  const auto shards = layout.shards(3);      // tp 3, pp 0
  const Shard* embedding = find(shards, "embedding.word_embeddings.weight");
  ASSERT_NE(embedding, nullptr);
  EXPECT_EQ(embedding->global_shape, (Shape{129024, 4096}));
  EXPECT_EQ(embedding->offset, (Shape{3 * 16128, 0}));
  EXPECT_EQ(embedding->extent, (Shape{16128, 4096}));
  EXPECT_EQ(embedding->bytes, 16128LL * 4096 * 2);
  const Shard* qkv = find(shards, "decoder.layers.7.self_attention.linear_qkv.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->global_shape, (Shape{(32 + 2 * 8) * 128, 4096}));
  EXPECT_EQ(qkv->offset, (Shape{3 * 768, 0}));
  const Shard* proj = find(shards, "decoder.layers.0.self_attention.linear_proj.weight");
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->offset, (Shape{0, 1536}));
  EXPECT_EQ(proj->extent, (Shape{4096, 512}));
  const Shard* fc1 = find(shards, "decoder.layers.0.mlp.linear_fc1.weight");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->global_shape, (Shape{2 * 14336, 4096}));
  EXPECT_EQ(find(shards, "decoder.layers.8.mlp.linear_fc1.weight"), nullptr);   // stage 1's layer
  EXPECT_EQ(find(shards, "decoder.layers.0.input_layernorm.weight"), nullptr);  // written by tp 0
  const auto tp0 = layout.shards(0);
  ASSERT_NE(find(tp0, "decoder.layers.0.input_layernorm.weight"), nullptr);
  EXPECT_EQ(find(tp0, "decoder.layers.0.input_layernorm.weight")->global_shape, (Shape{4096}));
}

TEST(LayoutShards, LastStageHoldsFinalNormAndOutput) {
  const Layout layout = layout_of("llama3-8b", {.tp = 8, .pp = 4});
  const auto shards = layout.shards(3 * 8);  // tp 0, pp 3
  ASSERT_NE(find(shards, "decoder.final_layernorm.weight"), nullptr);
  ASSERT_NE(find(shards, "output_layer.weight"), nullptr);
  ASSERT_NE(find(shards, "decoder.layers.24.pre_mlp_layernorm.weight"), nullptr);
  EXPECT_EQ(find(shards, "embedding.word_embeddings.weight"), nullptr);
}

TEST(LayoutShards, TiedEmbeddingsWrittenOnceByTheFirstStage) {
  const Layout layout = layout_of("gpt3-175b", {.tp = 8, .pp = 2});
  const auto last = layout.shards(8);  // tp 0, pp 1
  EXPECT_EQ(find(last, "output_layer.weight"), nullptr);
  ASSERT_NE(find(last, "decoder.final_layernorm.bias"), nullptr);
  const auto first = layout.shards(0);
  const Shard* positions = find(first, "embedding.position_embeddings.weight");
  ASSERT_NE(positions, nullptr);
  EXPECT_EQ(positions->global_shape, (Shape{2048, 12288}));
  EXPECT_EQ(positions->extent, (Shape{2048, 12288}));
  ASSERT_NE(find(first, "decoder.layers.0.self_attention.linear_qkv.bias"), nullptr);
  EXPECT_EQ(find(first, "decoder.layers.0.self_attention.linear_qkv.bias")->extent,
            (Shape{3 * 12288 / 8}));
  ASSERT_NE(find(first, "decoder.layers.0.mlp.linear_fc2.bias"),
            nullptr);  // row-parallel bias on tp 0 only
  EXPECT_EQ(find(layout.shards(1), "decoder.layers.0.mlp.linear_fc2.bias"), nullptr);
}

TEST(LayoutShards, UnevenPipelineStages) {
  const Layout layout = layout_of("llama3.1-405b", {.tp = 8,
                                                    .pp = 32,
                                                    .dp = 2,
                                                    .zero_stage = 1,
                                                    .pp_first_stage_layers = 3,
                                                    .pp_last_stage_layers = 3});
  EXPECT_EQ(layout.pipeline().layers_of(0), (std::pair<std::int64_t, std::int64_t>{0, 3}));
  EXPECT_EQ(layout.pipeline().layers_of(1), (std::pair<std::int64_t, std::int64_t>{3, 7}));
  EXPECT_EQ(layout.pipeline().layers_of(30), (std::pair<std::int64_t, std::int64_t>{119, 123}));
  EXPECT_EQ(layout.pipeline().layers_of(31), (std::pair<std::int64_t, std::int64_t>{123, 126}));
}

TEST(LayoutShards, Zero1PartitionsOptimizerStateAcrossDp) {
  const Layout layout = layout_of("llama3-8b", {.dp = 4, .zero_stage = 1});
  for (std::int64_t rank = 0; rank < 4; ++rank) {
    std::int64_t weight_bytes = 0, master_elements = 0;
    for (const Shard& s : layout.shards(rank)) {
      if (s.state == StateKind::weight) weight_bytes += s.bytes;
      if (s.state == StateKind::master) master_elements += s.elements();
    }
    EXPECT_EQ(weight_bytes, rank == 0 ? 8'030'261'248LL * 2 : 0) << rank;
    EXPECT_EQ(master_elements, 8'030'261'248LL / 4) << rank;  // divides exactly
  }
  // Partition 1 starts inside a tensor: its first piece is a flat range of that tensor.
  const auto shards = layout.shards(1);
  const auto first_master = std::find_if(
      shards.begin(), shards.end(), [](const Shard& s) { return s.state == StateKind::master; });
  ASSERT_NE(first_master, shards.end());
  EXPECT_GT(first_master->flat_begin, 0);
}

TEST(LayoutShards, Zero0WritesEverythingFromDpRankZero) {
  const Layout layout = layout_of("llama3-8b", {.tp = 2, .dp = 3});
  EXPECT_EQ(layout.totals(2).bytes, 0);  // tp 0, dp 1
  EXPECT_EQ(layout.totals(0).bytes + layout.totals(1).bytes, layout.checkpoint_bytes());
}

TEST(LayoutShards, Zero3PartitionsWeightsToo) {
  const Layout layout = layout_of("llama3-8b", {.dp = 8, .zero_stage = 3}, StateScope::weights);
  for (std::int64_t rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(layout.totals(rank).bytes, 8'030'261'248LL / 8 * 2) << rank;
  }
}

TEST(LayoutShards, ExpertParallelismAssignsWholeExperts) {
  const Layout layout = layout_of("mixtral-8x7b", {.dp = 8, .ep = 4});
  const auto shards = layout.shards(2);  // dp 2: ep rank 2, expert-dp rank 0
  ASSERT_NE(find(shards, "decoder.layers.31.mlp.experts.local_experts.4.linear_fc1.weight"),
            nullptr);
  ASSERT_NE(find(shards, "decoder.layers.0.mlp.experts.local_experts.5.linear_fc2.weight"),
            nullptr);
  EXPECT_EQ(find(shards, "decoder.layers.0.mlp.experts.local_experts.6.linear_fc1.weight"),
            nullptr);
  EXPECT_EQ(find(shards, "decoder.layers.0.mlp.router.weight"), nullptr);  // dense: dp 0 only
  EXPECT_EQ(layout.totals(6).bytes, 0);  // expert-dp rank 1 of ep 2: a replica
}

TEST(LayoutShards, HuggingFaceNamesForWeightsOnly) {
  const Layout layout = layout_of("llama3-8b", {}, StateScope::weights);
  const auto shards = layout.shards(0);
  ASSERT_EQ(shards.size(), 291u);
  EXPECT_EQ(shards.front().name, "model.embed_tokens.weight");
  EXPECT_EQ(shards.back().name, "lm_head.weight");
  ASSERT_NE(find(shards, "model.layers.31.mlp.down_proj.weight"), nullptr);
  EXPECT_EQ(find(shards, "model.layers.31.mlp.down_proj.weight")->global_shape,
            (Shape{4096, 14336}));
  EXPECT_EQ(find(shards, "model.layers.0.self_attn.k_proj.weight")->global_shape,
            (Shape{1024, 4096}));
  ASSERT_NE(find(shards, "model.norm.weight"), nullptr);
}

TEST(LayoutShards, DeepSeekAndMixtralHuggingFaceNames) {
  const auto deepseek = layout_of("deepseek-v3", {}, StateScope::weights).shards(0);
  ASSERT_NE(find(deepseek, "model.layers.3.mlp.experts.255.gate_proj.weight"), nullptr);
  ASSERT_NE(find(deepseek, "model.layers.3.mlp.gate.e_score_correction_bias"), nullptr);
  ASSERT_NE(find(deepseek, "model.layers.60.mlp.shared_experts.down_proj.weight"), nullptr);
  EXPECT_EQ(find(deepseek, "model.layers.2.mlp.experts.0.gate_proj.weight"),
            nullptr);  // dense layer
  EXPECT_EQ(find(deepseek, "model.layers.0.self_attn.kv_a_proj_with_mqa.weight")->global_shape,
            (Shape{576, 7168}));
  EXPECT_EQ(find(deepseek, "model.layers.0.self_attn.q_b_proj.weight")->global_shape,
            (Shape{128 * 192, 1536}));
  const auto mixtral = layout_of("mixtral-8x7b", {}, StateScope::weights).shards(0);
  EXPECT_EQ(find(mixtral, "model.layers.0.block_sparse_moe.experts.7.w2.weight")->global_shape,
            (Shape{4096, 14336}));
  ASSERT_NE(find(mixtral, "model.layers.0.block_sparse_moe.gate.weight"), nullptr);
}

TEST(LayoutShards, StateDtypesAreConfigurable) {
  const ModelSpec model = harness::zoo_model("llama3-8b");
  const std::int64_t params = 8'030'261'248;
  StateSpec no_master;
  no_master.master_dtype.reset();
  EXPECT_EQ(Layout(model, {}, no_master).checkpoint_bytes(), params * (2 + 4 + 4));
  StateSpec bf16_adam;
  bf16_adam.optimizer_dtype = Dtype::bf16;
  EXPECT_EQ(Layout(model, {}, bf16_adam).checkpoint_bytes(), params * (2 + 4 + 2 + 2));
  EXPECT_EQ(Layout(model, {}, StateSpec{}).state_kinds().size(), 4u);
}

TEST(LayoutShards, OneTrillionModelOn16kRanksSumsExactly) {
  const Layout layout = layout_of("mlperf-1t", {.tp = 8, .pp = 64, .dp = 32, .zero_stage = 1});
  ASSERT_EQ(layout.world_size(), 16384);
  std::int64_t sum = 0;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) sum += layout.totals(rank).bytes;
  const std::int64_t padding = (129024 - 128256) * 25872LL * 2;  // embedding and output tables
  EXPECT_EQ(sum, layout.checkpoint_bytes());
  EXPECT_EQ(layout.checkpoint_bytes(), (layout.parameters() + padding) * 14);
}

}  // namespace
}  // namespace ckpt::workloads
