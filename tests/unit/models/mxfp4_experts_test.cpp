// model.weights = "mxfp4" against gpt-oss as transformers stores it. The unquantized tensors of
// tests/data/hf/fixtures/<name>/expected.json (written with the real transformers) with each
// fused expert matrix replaced as Mxfp4GptOssExperts (transformers' integrations/mxfp4.py)
// declares its parameters: `X_blocks` uint8 [E, out, in / 32, 16] and `X_scales` uint8
// [E, out, in / 32], for gate_up_proj [E, h, 2f] and down_proj [E, f, h]; the biases and every
// other tensor unchanged (small-gpt-oss). Also the published gpt-oss-20b's expert tensors by value,
// the bytes saved, TP splits of blocks and scales, and the refusals.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"
#include "workloads/weight_quantization.hpp"

namespace ckpt::workloads {
namespace {

namespace fs = std::filesystem;
using Shape = std::vector<std::int64_t>;

struct Mxfp4Tensor {
  Dtype dtype;
  Shape shape;
  bool operator==(const Mxfp4Tensor&) const = default;
};

ModelSpec mxfp4_fixture_model(const std::string& name) {
  return harness::load_model_hf_json(fs::path(CKPT_SOURCE_DIR) / "tests/data/hf/fixtures" / name /
                                     "config.json");
}

StateSpec mxfp4_state() {
  StateSpec state;
  state.scope = StateScope::weights;
  state.weights = WeightFormat::mxfp4;
  return state;
}

Layout mxfp4_layout(const ModelSpec& model, std::int64_t tp = 1, std::int64_t ep = 1) {
  ParallelSpec parallel;
  parallel.tp = tp;
  parallel.ep = ep;
  parallel.dp = ep;
  return Layout(model, parallel, mxfp4_state());
}

// transformers' tensors of the fixture, the experts' matrices as Mxfp4GptOssExperts holds them.
std::map<std::string, Mxfp4Tensor> transformers_mxfp4_tensors(const std::string& name) {
  std::ifstream in(fs::path(CKPT_SOURCE_DIR) / "tests/data/hf/fixtures" / name / "expected.json");
  const nlohmann::json expected = nlohmann::json::parse(in);
  std::map<std::string, Mxfp4Tensor> out;
  for (const auto& [tensor, json_shape] : expected.at("tensors").items()) {
    const auto shape = json_shape.get<Shape>();
    if (!tensor.ends_with("experts.gate_up_proj") && !tensor.ends_with("experts.down_proj")) {
      out[tensor] = {Dtype::bf16, shape};
      continue;
    }
    const std::int64_t experts = shape[0], in_features = shape[1], out_features = shape[2];
    out[tensor + "_blocks"] = {Dtype::u8, {experts, out_features, in_features / 32, 16}};
    out[tensor + "_scales"] = {Dtype::u8, {experts, out_features, in_features / 32}};
  }
  return out;
}

std::map<std::string, Mxfp4Tensor> mxfp4_layout_tensors(const Layout& layout, std::int64_t rank) {
  std::map<std::string, Mxfp4Tensor> out;
  for (const Shard& s : layout.shards(rank)) out[s.name] = {s.dtype, s.extent};
  return out;
}

TEST(Mxfp4Experts, TheTensorsAreTransformersGptOssWithItsExpertsInBlocksAndScales) {
  const Layout layout = mxfp4_layout(mxfp4_fixture_model("small-gpt-oss"));
  EXPECT_EQ(mxfp4_layout_tensors(layout, 0), transformers_mxfp4_tensors("small-gpt-oss"));
  // gpt-oss-20b's fixture keeps only a count: transformers' 411 tensors, each layer's two expert
  // matrices now two tensors each.
  EXPECT_EQ(mxfp4_layout(mxfp4_fixture_model("gpt-oss-20b")).shards(0).size(), 411u + 24 * 2);
}

TEST(Mxfp4Experts, GptOss20bExpertsAreThoseOfThePublishedCheckpoint) {
  const Layout layout = mxfp4_layout(mxfp4_fixture_model("gpt-oss-20b"));
  const std::map<std::string, Mxfp4Tensor> ours = mxfp4_layout_tensors(layout, 0);
  const std::string p = "model.layers.23.mlp.experts.";
  EXPECT_EQ(ours.at(p + "gate_up_proj_blocks"), (Mxfp4Tensor{Dtype::u8, {32, 5760, 90, 16}}));
  EXPECT_EQ(ours.at(p + "gate_up_proj_scales"), (Mxfp4Tensor{Dtype::u8, {32, 5760, 90}}));
  EXPECT_EQ(ours.at(p + "gate_up_proj_bias"), (Mxfp4Tensor{Dtype::bf16, {32, 5760}}));
  EXPECT_EQ(ours.at(p + "down_proj_blocks"), (Mxfp4Tensor{Dtype::u8, {32, 2880, 90, 16}}));
  EXPECT_EQ(ours.at(p + "down_proj_scales"), (Mxfp4Tensor{Dtype::u8, {32, 2880, 90}}));
  EXPECT_EQ(ours.at(p + "down_proj_bias"), (Mxfp4Tensor{Dtype::bf16, {32, 2880}}));
  EXPECT_FALSE(ours.contains(p + "gate_up_proj"));
  // The published openai/gpt-oss-20b: 459 tensors, and its model.safetensors.index.json's
  // metadata.total_size byte for byte (so its biases, sinks and the rest are 2-byte too).
  EXPECT_EQ(ours.size(), 459u);
  EXPECT_EQ(layout.checkpoint_bytes(), 13761264768);
  // Per layer, 32 experts of 2 x 2880 x 2880 + 2880 x 2880 values: half a byte a value, and
  // one byte of scale per 32 values, against two bytes a value in bf16.
  const std::int64_t values = 32 * 3 * 2880 * 2880;
  const std::int64_t saved_per_layer = 2 * values - (values / 2 + values / 32);
  Layout plain(mxfp4_fixture_model("gpt-oss-20b"), {}, [] {
    StateSpec s = mxfp4_state();
    s.weights = WeightFormat::unquantized;
    return s;
  }());
  EXPECT_EQ(plain.checkpoint_bytes() - layout.checkpoint_bytes(), 24 * saved_per_layer);
}

TEST(Mxfp4Experts, TpCutsBlocksAndScalesWithTheMatrixAndEpTheirExperts) {
  // small-gpt-oss: h 256 (8 blocks), f 512 (16 blocks), 4 experts.
  const Layout layout = mxfp4_layout(mxfp4_fixture_model("small-gpt-oss"), 2, 2);
  const std::map<std::string, Mxfp4Tensor> rank3 = mxfp4_layout_tensors(layout, 3);
  const std::string p = "model.layers.1.mlp.experts.";
  // gate_up's output rows (2f) are cut, down's input blocks (f / 32); experts 2 and 3.
  EXPECT_EQ(rank3.at(p + "gate_up_proj_blocks"), (Mxfp4Tensor{Dtype::u8, {2, 512, 8, 16}}));
  EXPECT_EQ(rank3.at(p + "gate_up_proj_scales"), (Mxfp4Tensor{Dtype::u8, {2, 512, 8}}));
  EXPECT_EQ(rank3.at(p + "down_proj_blocks"), (Mxfp4Tensor{Dtype::u8, {2, 256, 8, 16}}));
  EXPECT_EQ(rank3.at(p + "down_proj_scales"), (Mxfp4Tensor{Dtype::u8, {2, 256, 8}}));
  for (const Shard& s : layout.shards(3)) {
    if (s.name == p + "down_proj_blocks") {
      EXPECT_EQ(s.offset, (Shape{2, 0, 8, 0}));
    }
    if (s.name == p + "gate_up_proj_scales") {
      EXPECT_EQ(s.offset, (Shape{2, 512, 0}));
    }
  }
}

TEST(Mxfp4Experts, ASplitThatCutsABlockAndAModelWithoutGptOssExpertsAreRefused) {
  ModelSpec narrow = mxfp4_fixture_model("small-gpt-oss");
  narrow.intermediate_size = 96;  // three blocks a row of down_proj
  try {
    mxfp4_layout(narrow, 2);
    FAIL() << "a TP 2 cut of three blocks was accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key(), "tp");
    EXPECT_EQ(std::string(e.what()),
              "tensor model.layers.*.mlp.experts.down_proj_blocks [4, 256, 3, 16] holds MXFP4 "
              "blocks of 32 values (model.weights = \"mxfp4\"), 3 to a row, and tp = 2 cuts a "
              "row's blocks into parts that are not whole blocks: a block and its scale must "
              "stay on one rank; use tp = 1, 3 for this tensor, or model.weights = "
              "\"unquantized\"");
  }
  EXPECT_NO_THROW(mxfp4_layout(narrow, 1));
  try {
    mxfp4_layout(mxfp4_fixture_model("qwen3-30b-a3b"));
    FAIL() << "mxfp4 accepted a model without gpt-oss experts";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.key(), "weights");
    EXPECT_NE(std::string(e.what()).find("has no gpt-oss experts"), std::string::npos) << e.what();
  }
  StateSpec full = mxfp4_state();
  full.scope = StateScope::full;
  try {
    Layout(mxfp4_fixture_model("small-gpt-oss"), {}, full);
    FAIL() << "mxfp4 accepted the full training state";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("model.weights = \"mxfp4\" stores an inference"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ckpt::workloads
