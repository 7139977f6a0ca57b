// sizing = "dlio": DLIO's checkpoint byte counts (dlio_benchmark/checkpointing/
// base_checkpointing.py), which MLPerf Storage v2.0 publishes. The totals are those DLIO
// reports for its shipped configs (dlio_benchmark/configs/workload/llama_*.yaml), exact:
// the per-tensor floor divisions are DLIO's own, so there is no rounding left to allow for.
#include <gtest/gtest.h>

#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

StateSpec dlio_state() {
  StateSpec state;
  state.sizing = Sizing::dlio;
  return state;
}

Layout dlio_layout(const std::string& model, const ParallelSpec& parallel) {
  return Layout(harness::zoo_model(model), parallel, dlio_state());
}

std::int64_t dlio_bytes(const std::string& model, const ParallelSpec& parallel) {
  return dlio_layout(model, parallel).checkpoint_bytes();
}

std::int64_t sum_of_ranks(const Layout& layout) {
  std::int64_t total = 0;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank)
    total += layout.totals(rank).bytes;
  return total;
}

TEST(DlioSizing, Llama7bDp8Zero1And3) {
  EXPECT_EQ(dlio_bytes("llama2-7b", {.dp = 8, .zero_stage = 1}), 94'339'784'704);
  EXPECT_EQ(dlio_bytes("llama2-7b", {.dp = 8, .zero_stage = 3}), 94'339'784'704);
}

TEST(DlioSizing, Llama8bZero3Dp8) {
  EXPECT_EQ(dlio_bytes("llama3-8b", {.dp = 8, .zero_stage = 3}), 112'425'623'552);
}

TEST(DlioSizing, Llama70bTp8Pp4Dp2Zero1AndTp8Dp8Zero3) {
  EXPECT_EQ(dlio_bytes("mlperf-llama3-70b", {.tp = 8, .pp = 4, .dp = 2, .zero_stage = 1}),
            978'406'572'032);
  EXPECT_EQ(dlio_bytes("mlperf-llama3-70b", {.tp = 8, .dp = 8, .zero_stage = 3}), 978'406'572'032);
}

TEST(DlioSizing, Llama405bTp8Pp32Dp2) {
  const Layout layout = dlio_layout("llama3.1-405b", {.tp = 8, .pp = 32, .dp = 2, .zero_stage = 1});
  EXPECT_EQ(layout.checkpoint_bytes(), 5'682'508'791'808);
  EXPECT_EQ(sum_of_ranks(layout), 5'682'508'791'808);
  EXPECT_EQ(layout.parameters(), 405'853'388'800);  // DLIO's count equals the real one here
}

TEST(DlioSizing, Llama1tTp8Pp64Dp2) {
  const Layout layout = dlio_layout("mlperf-1t", {.tp = 8, .pp = 64, .dp = 2, .zero_stage = 1});
  EXPECT_EQ(layout.checkpoint_bytes(), 16'564'174'094'592);
  // Q and O by hidden × hidden (25872²), not 192 heads × 134 = 25728 columns.
  const std::int64_t h = 25872, kv = 32 * (25872 / 192);
  EXPECT_EQ(layout.parameters(),
            128 * (h * (h + 2 * kv) + h * h + 3 * h * 98304 + 2 * h) + 2 * 128256 * h + h);
}

TEST(DlioSizing, RankOrderTpThenPpThenDp) {
  const Layout layout =
      dlio_layout("mlperf-llama3-70b", {.tp = 8, .pp = 4, .dp = 2, .zero_stage = 1});
  const RankCoord c = layout.coord(43);  // 43 = tp 3 + 8 × (pp 1 + 4 × dp 1)
  EXPECT_EQ(c.tp, 3);
  EXPECT_EQ(c.pp, 1);
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(layout.coord(31).pp, 3);
  EXPECT_EQ(layout.coord(31).dp, 0);
}

TEST(DlioSizing, UnevenSplitFrontLoadsTheRemainder) {
  // 126 layers over 32 stages: 30 stages of 4, then 2 of 3 (DLIO's get_layer_index).
  const Layout layout = dlio_layout("llama3.1-405b", {.tp = 8, .pp = 32, .dp = 2, .zero_stage = 1});
  EXPECT_EQ(layout.pipeline().layers_of(0), (std::pair<std::int64_t, std::int64_t>{0, 4}));
  EXPECT_EQ(layout.pipeline().layers_of(29), (std::pair<std::int64_t, std::int64_t>{116, 120}));
  EXPECT_EQ(layout.pipeline().layers_of(30), (std::pair<std::int64_t, std::int64_t>{120, 123}));
  EXPECT_EQ(layout.pipeline().layers_of(31), (std::pair<std::int64_t, std::int64_t>{123, 126}));
}

TEST(DlioSizing, OneRankByHand) {
  // 70B, TP8 PP4 DP2 ZeRO-1, rank 1 (tp 1, stage 0, dp 0): embedding, 20 layers, optimizer.
  const Layout layout =
      dlio_layout("mlperf-llama3-70b", {.tp = 8, .pp = 4, .dp = 2, .zero_stage = 1});
  const std::int64_t h = 8192, f = 28672, kv = 8 * 64, v = 128256;
  const std::int64_t layer = h + h * (h + 2 * kv) / 8 + h * h / 8 + h + 2 * f * h / 8 + f * h / 8;
  const std::int64_t weights = 2 * (h * v / 8 + 20 * layer);
  const std::int64_t parameters = 2 * v * h + 80 * (2 * h * h + 2 * h * kv + 3 * h * f + 2 * h) + h;
  const std::int64_t optimizer = 4 * 3 * (parameters / 64 + 5 * h);
  EXPECT_EQ(layout.totals(1).bytes, weights + optimizer);
  EXPECT_EQ(layout.totals(1).tensors, 1 + 20 * 6 + 3 * 2);
  // Stage 0's DP rank 1 holds only its optimizer share under ZeRO-1.
  EXPECT_EQ(layout.totals(32 + 1).bytes, optimizer);
}

TEST(DlioSizing, NormsOnEveryTpRankWithDlioNames) {
  const Layout layout = dlio_layout("llama3-8b", {.tp = 2, .dp = 1});
  const auto shards = layout.shards(1);
  ASSERT_GE(shards.size(), 2u);
  EXPECT_EQ(shards[1].name, "decoder.layers.0.input_layernorm.weight");
  EXPECT_EQ(shards[1].elements(), 4096);
  EXPECT_EQ(shards[0].name, "embedding.word_embeddings.weight");
  EXPECT_EQ(shards[0].offset, (std::vector<std::int64_t>{128256 * 4096 / 2}));  // no padding
  EXPECT_EQ(shards.back().name, "optimizer.state.exp_avg_sq.extra");
  EXPECT_EQ(shards.back().elements(), 5 * 4096);
}

TEST(DlioSizing, Zero0OnlyTheFirstReplicaWrites) {
  const Layout layout = dlio_layout("llama2-7b", {.tp = 2, .dp = 3});
  EXPECT_GT(layout.totals(1).bytes, 0);
  EXPECT_EQ(layout.totals(2).bytes, 0);
  EXPECT_EQ(layout.totals(5).bytes, 0);
  EXPECT_EQ(sum_of_ranks(layout), layout.checkpoint_bytes());
}

TEST(DlioSizing, Zero3FloorDivisionPerTensor) {
  // llama3-8b at DP 3, ZeRO-3: each of DLIO's tensors is floor-divided by 3 on its own.
  const Layout layout = dlio_layout("llama3-8b", {.dp = 3, .zero_stage = 3});
  const std::int64_t h = 4096, f = 14336, kv = 1024, v = 128256;
  const std::int64_t layer =
      2 * (h / 3) + h * (h + 2 * kv) / 3 + h * h / 3 + 2 * f * h / 3 + f * h / 3;
  const std::int64_t weights = 2 * (2 * (h * v / 3) + 32 * layer + h / 3);
  const std::int64_t optimizer = 4 * 3 * (8'030'261'248 / 3 + 5 * h);
  EXPECT_EQ(layout.totals(2).bytes, weights + optimizer);
  EXPECT_EQ(layout.checkpoint_bytes(), 3 * (weights + optimizer));
}

TEST(DlioSizing, EmptyTensorsAreSkippedAsDlioDoes) {
  // hidden 8 over DP 16 under ZeRO-3: every norm (8 // 16 = 0 elements) disappears.
  ModelSpec tiny;
  tiny.name = "tiny";
  tiny.hidden_size = 8;
  tiny.intermediate_size = 16;
  tiny.num_hidden_layers = 2;
  tiny.num_attention_heads = 2;
  tiny.vocab_size = 10;
  const Layout layout(tiny, {.dp = 16, .zero_stage = 3}, dlio_state());
  // Weights: embedding and output 80 // 16 = 5 each; per layer qkv 8·24 // 16 = 12, o 4,
  // fc1 16, fc2 8; no norms. Optimizer: DLIO's 1,480 parameters // 16 = 92, plus 5·8 = 40.
  const std::int64_t weights = 2 * (5 + 2 * (12 + 4 + 16 + 8) + 5);
  EXPECT_EQ(layout.parameters(), 2 * (8 * 32 + 3 * 8 * 16 + 16) + 2 * 80 + 8);
  EXPECT_EQ(layout.totals(7).bytes, weights + 4 * 3 * (92 + 40));
  EXPECT_EQ(layout.totals(7).tensors, 1 + 2 * 4 + 1 + 3 * 2);
  for (const Shard& s : layout.shards(7)) EXPECT_GT(s.elements(), 0) << s.name;
}

TEST(DlioSizing, RefusesWhatDlioCannotDescribe) {
  try {
    dlio_layout("mixtral-8x7b", {.dp = 8});
    FAIL() << "an MoE model was accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key(), "sizing");
    EXPECT_NE(std::string(e.what()).find("mixture of experts"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sizing = \"exact\""), std::string::npos) << e.what();
  }
  try {
    dlio_layout(
        "llama3.1-405b",
        {.tp = 8, .pp = 32, .dp = 2, .pp_first_stage_layers = 3, .pp_last_stage_layers = 3});
    FAIL() << "an explicit uneven split was accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key(), "pp_first_stage_layers");
  }
}

}  // namespace
}  // namespace ckpt::workloads
