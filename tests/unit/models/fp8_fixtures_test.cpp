// model.weights = "fp8_block" against transformers' fine-grained FP8 checkpoints: the fixtures
// of tests/data/hf/fp8 (written by make_fp8_fixtures.py with the real transformers, on the meta
// device) record every tensor save_pretrained writes for a quantized small Llama and DeepSeek-V3,
// with its dtype and shape, the quantization_config and the modules left unquantized. ckptbench's
// layout of the same config.json has the same tensors, shapes and dtypes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"
#include "workloads/weight_quantization.hpp"

namespace ckpt::workloads {
namespace {

namespace fs = std::filesystem;

struct Fp8Tensor {
  std::string dtype;  // as safetensors names it
  std::vector<std::int64_t> shape;
  bool operator==(const Fp8Tensor&) const = default;
};

std::string fp8_fixture_dtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::fp8:
      return "F8_E4M3";
    case Dtype::bf16:
      return "BF16";
    case Dtype::fp32:
      return "F32";
    default:
      return "other";
  }
}

nlohmann::json fp8_fixture(const std::string& name) {
  std::ifstream in(fs::path(CKPT_SOURCE_DIR) / "tests/data/hf/fp8" / (name + ".json"));
  return nlohmann::json::parse(in);
}

std::map<std::string, Fp8Tensor> fp8_layout_tensors(const std::string& name) {
  StateSpec state;
  state.scope = StateScope::weights;
  state.weights = WeightFormat::fp8_block;
  const Layout layout(harness::load_model_hf_json(fs::path(CKPT_SOURCE_DIR) /
                                                  "tests/data/hf/fixtures" / name / "config.json"),
                      {}, state);
  std::map<std::string, Fp8Tensor> out;
  for (const Shard& s : layout.shards(0)) out[s.name] = {fp8_fixture_dtype(s.dtype), s.extent};
  return out;
}

TEST(Fp8Fixtures, TheTensorsDtypesAndShapesAreThoseTransformersSaves) {
  // Tensors transformers keeps in float32 that ckptbench writes in state.weight_dtype, as it does
  // unquantized (hf_fixtures_test's not_bfloat16): DeepSeek-V3's router and its routing bias.
  const std::map<std::string, std::set<std::string>> kept_fp32{
      {"small-llama", {}},
      {"small-deepseek-v3",
       {"model.layers.1.mlp.gate.e_score_correction_bias", "model.layers.1.mlp.gate.weight",
        "model.layers.2.mlp.gate.e_score_correction_bias", "model.layers.2.mlp.gate.weight"}}};
  for (const auto& [name, fp32] : kept_fp32) {
    SCOPED_TRACE(name);
    const nlohmann::json fixture = fp8_fixture(name);
    const nlohmann::json& config = fixture.at("quantization_config");
    EXPECT_EQ(config.at("quant_method"), "fp8");
    EXPECT_EQ(config.at("weight_block_size"),
              nlohmann::json::array({kFp8BlockSize, kFp8BlockSize}));
    EXPECT_EQ(fixture.at("modules_not_converted"), nlohmann::json::array({"lm_head"}));
    std::map<std::string, Fp8Tensor> theirs;
    for (const auto& [tensor, t] : fixture.at("tensors").items())
      theirs[tensor] = {t.at("dtype"), t.at("shape").get<std::vector<std::int64_t>>()};
    const std::map<std::string, Fp8Tensor> ours = fp8_layout_tensors(name);
    std::set<std::string> float32_kept;
    for (const auto& [tensor, t] : theirs) {
      const auto it = ours.find(tensor);
      if (it == ours.end()) {
        ADD_FAILURE() << tensor << " is not in ckptbench's layout";
        continue;
      }
      EXPECT_EQ(it->second.shape, t.shape) << tensor;
      if (t.dtype == "F32" && it->second.dtype == "BF16") {
        float32_kept.insert(tensor);
        continue;
      }
      EXPECT_EQ(it->second.dtype, t.dtype) << tensor;
    }
    for (const auto& [tensor, t] : ours)
      EXPECT_TRUE(theirs.contains(tensor)) << tensor << " is not in transformers' checkpoint";
    EXPECT_EQ(float32_kept, fp32);
  }
}

}  // namespace
}  // namespace ckpt::workloads
