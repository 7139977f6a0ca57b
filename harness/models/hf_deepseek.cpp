// The DeepSeek-style families: DeepSeek-V2/V3's multi-head latent attention and MoE (a router
// with or without a correction bias, shared experts, leading dense layers), and the families
// that keep one of the two (GLM-4-MoE and Solar Open: the MoE with Llama's attention;
// MiniCPM3: the latent attention in a dense model).
#include <algorithm>
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
  // The key that says which layers are dense: mlp_layer_types ("dense" / "sparse" per layer;
  // default the first_dense leading ones), moe_layer_interval (ERNIE 4.5), none (every layer
  // MoE) or any other: how many dense layers lead (first_k_dense_replace; default first_dense).
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
  // The keys of the top-k and of the expert width, and the alias of the top-k key.
  std::string_view per_token_key = "num_experts_per_tok", per_token_alias = "";
  std::string_view expert_width_key = "moe_intermediate_size";
  // The key of the dense layers' width where it is not intermediate_size (which then sizes
  // the experts, as in Cohere2-MoE).
  std::string_view dense_width_key = "";
  bool router_bias_row = false;  // the correction bias [1, experts] (ERNIE 4.5)
};

constexpr std::string_view kFirstDense = "first_k_dense_replace";
constexpr std::string_view kMlpTypes = "mlp_layer_types";
// ERNIE 4.5: every moe_layer_interval-th layer from moe_layer_start_index to moe_layer_end_index.
constexpr std::string_view kInterval = "moe_layer_interval";

// clang-format off
constexpr DeepseekDefaults kDefaults[] = {
    {"deepseek_v3", true, 256, 8, 2048, 1, kFirstDense, 3, true, -1, true, 1536, 512, 128, 64, 128},
    // V2 leaves num_experts_per_tok unset; it only steers routing, never a tensor.
    {"deepseek_v2", true, 64, 1, 1407, 2, kFirstDense, 0, false, -1, true, 1536, 512, 128, 64, 128},
    {"sarvam_mla", true, 128, 8, 2048, 1, kFirstDense, 1, true, -1, true, 0, 512, 128, 64, 128},
    {"glm4_moe_lite", true, 64, 4, 1536, 1, kMlpTypes, 1, true, -1, true, 768, 512, 192, 64, 256},
    {"glm4_moe", true, 128, 8, 1408, 1, kFirstDense, 1, true, 0, false, 0, 0, 0, 0, 0},
    // dots.llm1: no experts by default (transformers then builds no model).
    {"dots1", true, 0, 0, 1408, 0, kFirstDense, 0, true, -1, false, 0, 0, 0, 0, 0},
    {"sarvam_moe", true, 128, 6, 1024, 1, kFirstDense, 1, true, 1, false, 0, 0, 0, 0, 0, "num_experts", "num_shared_experts"},
    {"exaone_moe", true, 64, 8, 1024, 1, kMlpTypes, 1, true, -1, false, 0, 0, 0, 0, 0, "", "", "num_experts", "num_shared_experts", true},
    {"solar_open", true, 128, 8, 1280, 1, "", 0, true, -1, false, 0, 0, 0, 0, 0, "num_local_experts"},
    {"cohere2_moe", true, 8, 2, 22528, 0, kMlpTypes, 0, false, -1, false, 0, 0, 0, 0, 0, "", "", "num_experts", "num_shared_experts", true,
     "num_experts_per_tok", "", "intermediate_size", "prefix_dense_intermediate_size"},
    {"ernie4_5_moe", true, 64, 6, 1536, 2, kInterval, 1, true, -1, false, 0, 0, 0, 0, 0, "num_experts", "", "moe_num_experts",
     "moe_num_shared_experts", false, "moe_k", "num_experts_per_tok", "moe_intermediate_size", "", true},
    {"afmoe", true, 64, 6, 1408, 2, "num_dense_layers", 1, true, -1, false, 0, 0, 0, 0, 0, "", "", "num_experts", "num_shared_experts"},
    {"hy_v3", true, 192, 8, 1536, 1, kMlpTypes, 1, true, -1, false, 0, 0, 0, 0, 0, "", "", "num_experts", "num_shared_experts"},
    {"axk1", true, 192, 8, 2048, 1, kMlpTypes, 1, true, -1, true, 1536, 512, 128, 64, 128},
    {"deepseek_v32", true, 256, 8, 2048, 1, kMlpTypes, 3, true, -1, true, 1536, 512, 128, 64, 128, "num_experts", "", "n_routed_experts",
     "n_shared_experts", true},
    {"glm_moe_dsa", true, 256, 8, 2048, 1, kMlpTypes, 3, true, -1, true, 2048, 512, 192, 64, 256, "num_experts", "", "n_routed_experts",
     "n_shared_experts", true},
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

void moe_layers_from_interval(workloads::ModelSpec& spec, const HfConfig& config,
                              const DeepseekDefaults& d) {
  const std::int64_t layers = spec.num_hidden_layers;
  const std::int64_t first = config.size_or("moe_layer_start_index", d.first_dense);
  // -1 (the default) means the last layer; transformers saves it resolved.
  const double end = config.number_or("moe_layer_end_index", -1.0);
  const std::int64_t last = end < 0 ? layers - 1 : static_cast<std::int64_t>(end);
  const std::int64_t interval = config.size_or(kInterval, 1);
  if (interval == 0) config.at().fail(kInterval, "must be positive");
  for (std::int64_t layer = first; layer <= last && layer < layers; ++layer)
    if ((layer + 1) % interval == 0) spec.moe_layers.push_back(layer);
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
  if (d.dense_key == kMlpTypes || d.dense_key == kInterval) {
    (d.dense_key == kMlpTypes ? moe_layers_from_types : moe_layers_from_interval)(spec, config, d);
    if (spec.moe_layers.empty()) return;  // every layer dense
  } else if (!d.dense_key.empty()) {      // the count of leading dense layers
    spec.first_k_dense_replace = config.size_or(d.dense_key, d.first_dense);
  }
  spec.num_experts_per_tok =
      config.size_or(either(d.per_token_alias, d.per_token_key), d.per_token);
  spec.moe_intermediate_size = config.size_or(d.expert_width_key, d.expert_width);
  spec.n_shared_experts = config.size_or(either(d.shared_alias, d.shared_key), d.shared);
  spec.moe_router_bias = d.router_bias;
  spec.router_bias_row = d.router_bias_row;
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

// DeepSeek-V3.2 and GLM-5: DeepSeek Sparse Attention's indexer in every layer but those that
// indexer_types marks "shared" (GLM-5; without the list, its index_topk_pattern string of F and S,
// else the schedule of index_topk_freq and index_skip_topk_offset that its config class derives).
void map_indexer(workloads::ModelSpec& spec, const HfConfig& config, std::int64_t heads) {
  spec.indexer_heads = config.size_or("index_n_heads", heads);
  spec.indexer_head_dim = config.size_or("index_head_dim", 128);
  if (!config.declares("indexer_types")) return;
  std::vector<std::string> types = config.texts("indexer_types");
  const std::string pattern = config.text_if_string("index_topk_pattern");
  if (types.empty() && !pattern.empty()) {
    for (const char c : pattern) types.emplace_back(c == 'S' ? "shared" : c == 'F' ? "full" : "?");
  }
  const std::string_view key = config.has("indexer_types") ? "indexer_types" : "index_topk_pattern";
  if (types.empty()) {
    const std::int64_t freq = std::max<std::int64_t>(config.size_or("index_topk_freq", 1), 1);
    const std::int64_t offset = config.size_or("index_skip_topk_offset", 2);
    for (std::int64_t layer = 0; layer < spec.num_hidden_layers; ++layer)
      types.emplace_back(std::max<std::int64_t>(layer - offset + 1, 0) % freq == 0 ? "full"
                                                                                   : "shared");
  }
  if (static_cast<std::int64_t>(types.size()) != spec.num_hidden_layers) {
    config.at().fail(
        key, "lists " + std::to_string(types.size()) +
                 " layers for num_hidden_layers = " + std::to_string(spec.num_hidden_layers));
  }
  for (std::size_t layer = 0; layer < types.size(); ++layer) {
    if (types[layer] != "full" && types[layer] != "shared")
      config.at().fail(
          key, "entries must be \"full\" or \"shared\" (F or S), found \"" + types[layer] + "\"");
    if (types[layer] == "shared")
      spec.shared_indexer_layers.push_back(static_cast<std::int64_t>(layer));
  }
}

}  // namespace

std::string_view deepseek_experts_key(std::string_view type) {
  return defaults_of(type).experts_key;
}

void map_deepseek(workloads::ModelSpec& spec, const HfConfig& config, std::string_view type) {
  const DeepseekDefaults& d = defaults_of(type);
  if (spec.hf_names == workloads::HfNames::llama) spec.hf_names = workloads::HfNames::deepseek;
  // Sarvam-MoE's original config.json spells attention_bias use_qkv_bias.
  if (type == "sarvam_moe" && config.has("use_qkv_bias"))
    spec.qkv_bias = config.flag_or("use_qkv_bias", false);
  if (d.moe) map_moe(spec, config, d);
  if (!d.dense_width_key.empty()) {
    const std::int64_t width =
        spec.moe_intermediate_size > 0 ? spec.moe_intermediate_size : spec.intermediate_size;
    spec.intermediate_size = config.size_or(d.dense_width_key, width);
  }
  // transformers gives AFMoE's MoE layers a shared MLP whatever its width.
  if (type == "afmoe" && spec.is_moe() && spec.n_shared_experts == 0) {
    config.at().fail("num_shared_experts",
                     "0 gives every MoE layer a shared MLP of zero-size tensors, which ckptbench "
                     "does not lay out");
  }
  // HY-V3's shared MLP is intermediate_size wide when there are no shared experts.
  if (type == "hy_v3" && spec.is_moe() && spec.n_shared_experts == 0) {
    spec.shared_expert_intermediate_size = spec.intermediate_size;
  }
  spec.moe_output_norm = type == "axk1";  // A.X-K1 normalises the MoE block's output
  // ERNIE 4.5's use_bias reaches the output layer too.
  if (type == "ernie4_5_moe") spec.lm_head_bias = config.flag_or("use_bias", false);
  if (d.use_qk_norm >= 0) spec.qk_norm = config.flag_or("use_qk_norm", d.use_qk_norm == 1);
  if (d.mla) map_mla(spec, config, d);
  if (type == "deepseek_v32" || type == "glm_moe_dsa")
    map_indexer(spec, config, type == "glm_moe_dsa" ? 32 : 64);
}

}  // namespace ckpt::harness::hf
