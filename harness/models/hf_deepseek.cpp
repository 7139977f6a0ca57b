// The DeepSeek-style families: DeepSeek-V2/V3's multi-head latent attention and MoE (a router
// with or without a correction bias, shared experts, leading dense layers), and the families
// that keep one of the two (GLM-4-MoE and Solar Open: the MoE with Llama's attention;
// MiniCPM3: the latent attention in a dense model).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/models/hf_families.hpp"

namespace ckpt::harness::hf {
namespace {

// The defaults of each family's transformers config class.
struct DeepseekDefaults {
  std::string_view type;
  bool moe;  // reads the MoE keys
  std::int64_t experts, per_token, expert_width, shared;
  // The key that says which layers are dense: first_k_dense_replace (how many lead, default
  // first_dense), mlp_layer_types ("dense" / "sparse" per layer; default the first_dense
  // leading ones) or none (every layer MoE).
  std::string_view dense_key;
  std::int64_t first_dense;
  // transformers' V3-style routers always carry e_score_correction_bias, V2's never (whatever
  // topk_method says: it only picks the routing rule).
  bool router_bias;
  int use_qk_norm;  // the default of use_qk_norm (q/k norms of head_dim); -1: no such key
  bool mla;
  std::int64_t q_lora, kv_lora, nope, rope, v;  // v = 0: hidden / heads
  // Other spellings of n_routed_experts and n_shared_experts the config class accepts.
  std::string_view experts_alias = "", shared_alias = "";
  // The family's own spellings of them, where it has no other (EXAONE-MoE).
  std::string_view experts_key = "n_routed_experts", shared_key = "n_shared_experts";
  // mlp_layer_types defaults to first_k_dense_replace leading dense layers (EXAONE-MoE).
  bool first_dense_key = false;
};

constexpr std::string_view kFirstDense = "first_k_dense_replace";
constexpr std::string_view kMlpTypes = "mlp_layer_types";

// clang-format off
constexpr DeepseekDefaults kDefaults[] = {
    {"deepseek_v3", true, 256, 8, 2048, 1, kFirstDense, 3, true, -1, true, 1536, 512, 128, 64, 128},
    // V2 leaves num_experts_per_tok unset; it only steers routing, never a tensor.
    {"deepseek_v2", true, 64, 1, 1407, 2, kFirstDense, 0, false, -1, true, 1536, 512, 128, 64, 128},
    {"sarvam_mla", true, 128, 8, 2048, 1, kFirstDense, 1, true, -1, true, 0, 512, 128, 64, 128},
    {"glm4_moe_lite", true, 64, 4, 1536, 1, kMlpTypes, 1, true, -1, true, 768, 512, 192, 64, 256},
    {"glm4_moe", true, 128, 8, 1408, 1, kFirstDense, 1, true, 0, false, 0, 0, 0, 0, 0},
    {"sarvam_moe", true, 128, 6, 1024, 1, kFirstDense, 1, true, 1, false, 0, 0, 0, 0, 0, "num_experts", "num_shared_experts"},
    {"exaone_moe", true, 64, 8, 1024, 1, kMlpTypes, 1, true, -1, false, 0, 0, 0, 0, 0, "", "", "num_experts", "num_shared_experts", true},
    {"solar_open", true, 128, 8, 1280, 1, "", 0, true, -1, false, 0, 0, 0, 0, 0, "num_local_experts"},
    {"minicpm3", false, 0, 0, 0, 0, "", 0, false, -1, true, 768, 256, 64, 32, 0},
    {"youtu", false, 0, 0, 0, 0, "", 0, false, -1, true, 1536, 512, 128, 64, 128},
};
// clang-format on

const DeepseekDefaults& defaults_of(std::string_view type) {
  for (const DeepseekDefaults& d : kDefaults)
    if (d.type == type) return d;
  return kDefaults[0];
}

// The MoE layers of a "dense" / "sparse" list; ModelSpec lists them.
void moe_layers_from_types(workloads::ModelSpec& spec, const HfConfig& config,
                           const DeepseekDefaults& d) {
  const std::vector<std::string> types = config.texts(kMlpTypes);
  const std::int64_t first_dense =
      d.first_dense_key ? config.size_or(kFirstDense, d.first_dense) : d.first_dense;
  for (std::int64_t layer = 0; layer < spec.num_hidden_layers; ++layer) {
    const auto i = static_cast<std::size_t>(layer);
    const bool sparse =
        types.empty() ? layer >= first_dense : i < types.size() && types[i] == "sparse";
    if (i < types.size() && types[i] != "sparse" && types[i] != "dense")
      config.at().fail(kMlpTypes,
                       "entries must be \"dense\" or \"sparse\", found \"" + types[i] + "\"");
    if (sparse) spec.moe_layers.push_back(layer);
  }
  if (!types.empty() && static_cast<std::int64_t>(types.size()) != spec.num_hidden_layers) {
    config.at().fail(
        kMlpTypes, "lists " + std::to_string(types.size()) +
                       " layers for num_hidden_layers = " + std::to_string(spec.num_hidden_layers));
  }
  if (spec.moe_layers.empty()) spec.num_local_experts = 0;
}

void map_moe(workloads::ModelSpec& spec, const HfConfig& config, const DeepseekDefaults& d) {
  const auto either = [&](std::string_view alias, std::string_view key) {
    return !alias.empty() && config.has(alias) ? alias : key;
  };
  // n_routed_experts null: a dense model. 0 is no dense model in transformers (an MoE block
  // without experts), so it stays MoE and validation refuses it, naming the key.
  const std::string_view key = either(d.experts_alias, d.experts_key);
  if (config.is_null(key)) return;
  spec.num_local_experts = config.size_or(key, d.experts);
  if (d.dense_key == kFirstDense)
    spec.first_k_dense_replace = config.size_or(kFirstDense, d.first_dense);
  if (d.dense_key == kMlpTypes) {
    moe_layers_from_types(spec, config, d);
    if (spec.moe_layers.empty()) return;  // every layer dense
  }
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", d.per_token);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", d.expert_width);
  spec.n_shared_experts = config.size_or(either(d.shared_alias, d.shared_key), d.shared);
  spec.moe_router_bias = d.router_bias;
}

void map_mla(workloads::ModelSpec& spec, const HfConfig& config, const DeepseekDefaults& d) {
  // q_lora_rank: null means uncompressed queries (DeepSeek-V2-Lite); absent means the default.
  spec.q_lora_rank = config.is_null("q_lora_rank") ? 0 : config.size_or("q_lora_rank", d.q_lora);
  spec.kv_lora_rank = config.size_or("kv_lora_rank", d.kv_lora);
  spec.qk_nope_head_dim = config.size_or("qk_nope_head_dim", d.nope);
  spec.qk_rope_head_dim = config.size_or("qk_rope_head_dim", d.rope);
  const std::int64_t v =
      d.v > 0 || spec.num_attention_heads == 0 ? d.v : spec.hidden_size / spec.num_attention_heads;
  spec.v_head_dim = config.is_null("v_head_dim") ? v : config.size_or("v_head_dim", v);
  // Derived by transformers 5 and written to config.json; a value that disagrees would mean
  // another query width than the one laid out.
  if (const auto qk = config.size("qk_head_dim");
      qk && *qk != spec.qk_nope_head_dim + spec.qk_rope_head_dim) {
    config.at().fail("qk_head_dim",
                     "qk_head_dim = " + std::to_string(*qk) +
                         " differs from qk_nope_head_dim + qk_rope_head_dim = " +
                         std::to_string(spec.qk_nope_head_dim + spec.qk_rope_head_dim));
  }
}

}  // namespace

void map_deepseek(workloads::ModelSpec& spec, const HfConfig& config, std::string_view type) {
  const DeepseekDefaults& d = defaults_of(type);
  if (spec.hf_names == workloads::HfNames::llama) spec.hf_names = workloads::HfNames::deepseek;
  // Sarvam-MoE's original config.json spells attention_bias use_qkv_bias.
  if (type == "sarvam_moe" && config.has("use_qkv_bias"))
    spec.qkv_bias = config.flag_or("use_qkv_bias", false);
  if (d.moe) map_moe(spec, config, d);
  if (d.use_qk_norm >= 0) spec.qk_norm = config.flag_or("use_qk_norm", d.use_qk_norm == 1);
  if (d.mla) map_mla(spec, config, d);
}

}  // namespace ckpt::harness::hf
