// model.weights = "fp8_block": every linear weight in FP8 with its float32 block scales beside
// it, the rest unquantized; the exact tensors, shapes, dtypes and bytes of a small model at TP 1
// and TP 2 worked out by hand, a scale split with its weight's blocks, and the refusals (a TP
// that cuts a block, full training state, DLIO sizing) naming the tensor and the fix.
#include "workloads/weight_quantization.hpp"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/unit/workloads/spec_error_expect.hpp"
#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

using Shape = std::vector<std::int64_t>;

// One layer, two heads of 128: at TP 2 every split linear weight keeps whole 128 x 128 blocks.
ModelSpec fp8_tiny_model(std::int64_t heads = 2, std::int64_t kv_heads = 2) {
  ModelSpec m;
  m.name = "fp8-tiny";
  m.hidden_size = 256;
  m.intermediate_size = 512;
  m.num_hidden_layers = 1;
  m.num_attention_heads = heads;
  m.num_key_value_heads = kv_heads;
  m.vocab_size = 1000;
  return m;
}

StateSpec fp8_weights_state() {
  StateSpec state;
  state.scope = StateScope::weights;
  state.weights = WeightFormat::fp8_block;
  return state;
}

Layout fp8_tiny_layout(std::int64_t tp) {
  ParallelSpec parallel;
  parallel.tp = tp;
  return Layout(fp8_tiny_model(), parallel, fp8_weights_state());
}

using Fp8Entry = std::tuple<std::string, Dtype, Shape>;

std::vector<Fp8Entry> fp8_entries(const std::vector<Shard>& shards) {
  std::vector<Fp8Entry> out;
  for (const Shard& s : shards) out.emplace_back(s.name, s.dtype, s.extent);
  return out;
}

const Shard& fp8_shard(const std::vector<Shard>& shards, const std::string& name) {
  for (const Shard& s : shards) {
    if (s.name == name) return s;
  }
  throw std::runtime_error("no shard " + name);
}

TEST(QuantizedWeights, LinearWeightsAreFp8WithTheirBlockScalesBesideThem) {
  const Layout layout = fp8_tiny_layout(1);
  const std::string layer = "model.layers.0.";
  const std::vector<Fp8Entry> expected{
      {"model.embed_tokens.weight", Dtype::bf16, {1000, 256}},
      {layer + "input_layernorm.weight", Dtype::bf16, {256}},
      {layer + "self_attn.q_proj.weight", Dtype::fp8, {256, 256}},
      {layer + "self_attn.q_proj.weight_scale_inv", Dtype::fp32, {2, 2}},
      {layer + "self_attn.k_proj.weight", Dtype::fp8, {256, 256}},
      {layer + "self_attn.k_proj.weight_scale_inv", Dtype::fp32, {2, 2}},
      {layer + "self_attn.v_proj.weight", Dtype::fp8, {256, 256}},
      {layer + "self_attn.v_proj.weight_scale_inv", Dtype::fp32, {2, 2}},
      {layer + "self_attn.o_proj.weight", Dtype::fp8, {256, 256}},
      {layer + "self_attn.o_proj.weight_scale_inv", Dtype::fp32, {2, 2}},
      {layer + "post_attention_layernorm.weight", Dtype::bf16, {256}},
      {layer + "mlp.gate_proj.weight", Dtype::fp8, {512, 256}},
      {layer + "mlp.gate_proj.weight_scale_inv", Dtype::fp32, {4, 2}},
      {layer + "mlp.up_proj.weight", Dtype::fp8, {512, 256}},
      {layer + "mlp.up_proj.weight_scale_inv", Dtype::fp32, {4, 2}},
      {layer + "mlp.down_proj.weight", Dtype::fp8, {256, 512}},
      {layer + "mlp.down_proj.weight_scale_inv", Dtype::fp32, {2, 4}},
      {"model.norm.weight", Dtype::bf16, {256}},
      {"lm_head.weight", Dtype::bf16, {1000, 256}},
  };
  const std::vector<Shard> shards = layout.shards(0);
  EXPECT_EQ(fp8_entries(shards), expected);
  for (const Shard& s : shards) EXPECT_EQ(s.bytes, s.elements() * dtype_bytes(s.dtype)) << s.name;
  // Embedding and lm_head 2 × 512000, three norms of 512, the seven linear weights in one byte an
  // element (4 × 65536 + 3 × 131072) and their 40 scales in four.
  constexpr std::int64_t kFp8Bytes = 2 * 512000 + 3 * 512 + 4 * 65536 + 3 * 131072 + 40 * 4;
  EXPECT_EQ(layout.checkpoint_bytes(), kFp8Bytes);
  EXPECT_EQ(layout.totals(0).bytes, kFp8Bytes);
  EXPECT_EQ(layout.totals(0).tensors, 19);
  std::int64_t visited = 0;
  layout.for_each_shard_size(0, [&](std::int64_t bytes) { visited += bytes; });
  EXPECT_EQ(visited, kFp8Bytes);
  // The same model unquantized: the linear weights in bf16, no scales.
  StateSpec bf16 = fp8_weights_state();
  bf16.weights = WeightFormat::unquantized;
  const Layout plain(fp8_tiny_model(), {}, bf16);
  EXPECT_EQ(plain.checkpoint_bytes(), 2 * 512000 + 3 * 512 + 2 * (4 * 65536 + 3 * 131072));
  EXPECT_EQ(plain.parameters(), layout.parameters());  // scales are no model parameters
}

TEST(QuantizedWeights, TensorParallelismSplitsEachScaleWithItsWeightsBlocks) {
  const Layout layout = fp8_tiny_layout(2);
  const std::vector<Shard> rank1 = layout.shards(1);
  const std::string layer = "model.layers.0.";
  // Column-parallel q_proj: rank 1 holds rows 128..256 and the second row of scales.
  const Shard& q = fp8_shard(rank1, layer + "self_attn.q_proj.weight");
  EXPECT_EQ(q.offset, (Shape{128, 0}));
  EXPECT_EQ(q.extent, (Shape{128, 256}));
  const Shard& q_scale = fp8_shard(rank1, layer + "self_attn.q_proj.weight_scale_inv");
  EXPECT_EQ(q_scale.global_shape, (Shape{2, 2}));
  EXPECT_EQ(q_scale.offset, (Shape{1, 0}));
  EXPECT_EQ(q_scale.extent, (Shape{1, 2}));
  EXPECT_EQ(q_scale.dtype, Dtype::fp32);
  EXPECT_EQ(q_scale.bytes, 8);
  // Row-parallel down_proj [256, 512]: columns 256..512, scale columns 2..4.
  const Shard& down = fp8_shard(rank1, layer + "mlp.down_proj.weight");
  EXPECT_EQ(down.offset, (Shape{0, 256}));
  EXPECT_EQ(down.extent, (Shape{256, 256}));
  EXPECT_EQ(down.dtype, Dtype::fp8);
  EXPECT_EQ(down.bytes, 65536);
  const Shard& down_scale = fp8_shard(rank1, layer + "mlp.down_proj.weight_scale_inv");
  EXPECT_EQ(down_scale.offset, (Shape{0, 2}));
  EXPECT_EQ(down_scale.extent, (Shape{2, 2}));
  // The vocabulary pads to 1024 rows at TP 2; TP rank 0 alone writes the three norms.
  constexpr std::int64_t kRank1 = 2 * 512 * 256 * 2 + 4 * 32768 + 3 * 65536 + 4 * 8 + 3 * 16;
  EXPECT_EQ(layout.totals(1).bytes, kRank1);
  EXPECT_EQ(layout.totals(0).bytes, kRank1 + 3 * 512);
  EXPECT_EQ(layout.checkpoint_bytes(), 2 * kRank1 + 3 * 512);
}

TEST(QuantizedWeights, ASplitThatCutsABlockIsRefusedNamingTheTensorAndTheFix) {
  // Four heads of 64, two KV heads: TP 2 leaves k_proj 64 rows a rank, half a block.
  expect_spec_error(
      [] { Layout(fp8_tiny_model(4, 2), {.tp = 2}, fp8_weights_state()); }, "tp",
      {"tensor model.layers.*.self_attn.k_proj.weight [128, 256]", "tp = 2 cuts its dimension 0",
       "parts of 64", "model.layers.*.self_attn.k_proj.weight_scale_inv must stay on one rank",
       "use tp = 1 for this tensor", "model.weights = \"unquantized\""});
  StateSpec full = fp8_weights_state();
  full.scope = StateScope::full;
  expect_spec_error([&] { Layout(fp8_tiny_model(), {}, full); }, "weights",
                    {"state.scope = \"weights\""});
  StateSpec dlio = fp8_weights_state();
  dlio.sizing = Sizing::dlio;
  expect_spec_error([&] { Layout(fp8_tiny_model(), {}, dlio); }, "weights",
                    {"model.sizing = \"exact\""});
}

TEST(QuantizedWeights, ScaleNamesFollowTransformers) {
  EXPECT_EQ(fp8_scale_name("model.layers.{layer}.mlp.down_proj.weight"),
            "model.layers.{layer}.mlp.down_proj.weight_scale_inv");
  EXPECT_EQ(fp8_scale_name("model.layers.{layer}.mlp.experts.gate_up_proj"),
            "model.layers.{layer}.mlp.experts.gate_up_proj_scale_inv");
}

}  // namespace
}  // namespace ckpt::workloads
