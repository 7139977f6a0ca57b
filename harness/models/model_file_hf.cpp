// Hugging Face config.json → ModelSpec. Missing keys take the defaults of the matching
// transformers config class, so that a config saved by transformers and one trimmed by hand
// describe the same model.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "harness/common/config_error.hpp"
#include "harness/common/suggest.hpp"
#include "harness/models/hf_arch_table.hpp"
#include "harness/models/hf_config.hpp"
#include "harness/models/hf_families.hpp"
#include "harness/models/hf_save_orders.hpp"
#include "harness/models/model_file.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

using hf::ArchName;
using hf::describe;
using hf::HfArch;
using hf::HfConfig;
using hf::Json;
using hf::line_at;
using hf::Locator;
using hf::Traits;
using workloads::ModelSpec;
using workloads::NormPlacement;
using workloads::QkNormShape;

// The keys a row's traits read.
std::vector<std::string_view> trait_keys(const Traits& t) {
  std::vector<std::string_view> keys;
  const std::string_view activation = t.activation.empty() ? "" : "hidden_act";
  for (const std::string_view key : {t.qkv_bias_key, t.o_bias_key, t.mlp_bias_key, t.unmodelled,
                                     t.post_norm_key, activation, t.output_rows_key}) {
    if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

bool contains(std::span<const std::string_view> keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::vector<std::string_view> consumed_keys(const ArchName& info) {
  const std::span<const std::string_view> common = hf::common_keys();
  std::vector<std::string_view> keys(common.begin(), common.end());
  if (info.reads_head_dim) keys.push_back(hf::kHeadDimKey);
  keys.insert(keys.end(), info.keys.begin(), info.keys.end());
  const std::vector<std::string_view> traits = trait_keys(info.traits);
  keys.insert(keys.end(), traits.begin(), traits.end());
  return keys;
}

bool read_by_any_arch(std::string_view key) {
  if (contains(hf::common_keys(), key) || key == hf::kHeadDimKey) return true;
  const std::span<const ArchName> table = hf::arch_table();
  return std::any_of(table.begin(), table.end(), [key](const ArchName& name) {
    return contains(name.keys, key) || contains(trait_keys(name.traits), key);
  });
}

std::string supported_list() {
  std::string list;
  for (const ArchName& name : hf::arch_table()) {
    if (!list.empty()) list += ", ";
    list += std::string(name.model_type) + " (" + std::string(name.class_name) + ")";
  }
  return list;
}

std::vector<std::string> class_names(const Json& root, const Locator& at) {
  std::vector<std::string> names;
  const auto it = root.find("architectures");
  if (it == root.end() || it->is_null()) return names;
  if (!it->is_array()) at.fail("architectures", "expected an array, found " + describe(*it));
  for (const Json& entry : *it) {
    if (!entry.is_string()) {
      at.fail("architectures", "expected an array of strings, found " + describe(entry) + " in it");
    }
    names.push_back(entry.get<std::string>());
  }
  return names;
}

// model_type decides, as it does for transformers' AutoConfig; architectures is the fallback.
const ArchName& detect_arch(const Json& root, const Locator& at) {
  const std::vector<std::string> classes = class_names(root, at);
  const auto type_it = root.find("model_type");
  const bool has_type = type_it != root.end() && !type_it->is_null();
  if (has_type && !type_it->is_string()) {
    at.fail("model_type", "expected a string, found " + describe(*type_it));
  }
  const std::string model_type = has_type ? type_it->get<std::string>() : std::string();
  for (const ArchName& name : hf::arch_table()) {
    if (has_type && model_type == name.model_type) return name;
    if (!has_type && std::find(classes.begin(), classes.end(), name.class_name) != classes.end()) {
      return name;
    }
  }
  // The other way in: a TOML model file with the architecture spelled out.
  const std::string supported =
      " — supported: " + supported_list() +
      ". For another architecture write a TOML model file instead (required keys: name, "
      "hidden_size, "
      "num_hidden_layers, num_attention_heads, vocab_size, and intermediate_size unless every "
      "layer is MoE; "
      "optional: num_key_value_heads, head_dim, tie_word_embeddings, norm, norm_placement, mlp, "
      "position_embedding, qkv_bias, o_bias, mlp_bias, linear_bias, qk_norm, MoE and MLA keys; see "
      "README "
      "\"Model files\") and pass its path as the model, e.g. workloads/zoo/qwen2-7b.toml";
  if (!has_type && classes.empty()) {
    const std::string problem =
        "required key is missing (neither `model_type` nor `architectures` is given, so the "
        "architecture is unknown)";
    throw ConfigError(at.source(), 0, "model_type", problem + supported);
  }
  std::string found = has_type ? "\"" + model_type + "\"" : std::string();
  for (const std::string& cls : classes) found += (found.empty() ? "(" : " (") + cls + ")";
  at.fail(has_type ? "model_type" : "architectures",
          "unsupported architecture " + found + supported);
}

void check_unknown_keys(const Json& root, const Locator& at, const ArchName& arch) {
  const std::vector<std::string_view> consumed = consumed_keys(arch);
  for (const auto& [key, value] : root.items()) {
    if (read_by_any_arch(key) || contains(hf::ignored_keys(), key)) continue;
    std::size_t nearest = std::numeric_limits<std::size_t>::max();
    for (const std::string_view known : consumed) {
      nearest = std::min(nearest, edit_distance(key, known));
    }
    if (nearest <= 2) at.fail(key, "unknown key" + did_you_mean(key, consumed));
  }
}

// The row's traits: norms, names, q/k norms and which bias keys reach which matrices.
void apply_traits(ModelSpec& spec, const HfConfig& config, const Traits& t) {
  const auto flag = [&](std::string_view key, bool fallback) {
    return key.empty() ? fallback : config.flag_or(key, fallback);
  };
  if (flag(t.unmodelled, false)) {
    config.at().fail(t.unmodelled,
                     std::string(t.unmodelled) +
                         " = true adds tensors ckptbench does not lay out for this "
                         "architecture; describe the model in a TOML model file instead");
  }
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", t.tie);
  spec.norm = t.norm;
  spec.norm_placement = flag(t.post_norm_key, true) ? t.placement : NormPlacement::pre;
  spec.qk_norm = t.qk_norm;
  spec.qk_norm_shape = t.qk_norm_shape;
  spec.mlp = t.mlp;
  spec.fused_qkv = t.fused_qkv;
  spec.fused_gate_up = t.fused_gate_up;
  spec.attention_sinks = t.sinks;
  spec.sub_norms = t.sub_norms;
  spec.attention_lambdas = t.lambdas;
  spec.attention_gate_proj = t.gate_proj;
  spec.hf_names = t.names;
  spec.qkv_bias = flag(t.qkv_bias_key, t.qkv_bias);
  spec.o_bias = flag(t.o_bias_key, t.o_bias);
  spec.mlp_bias = flag(t.mlp_bias_key, t.mlp_bias);
  if (!t.activation.empty())
    spec.xielu_activation =
        config.text("hidden_act").value_or(std::string(t.activation)) == "xielu";
  if (!t.output_rows_key.empty()) spec.output_vocab_size = config.size_or(t.output_rows_key, 0);
}

// MiniMaxConfig: attention in the "full_attention" layers of layer_types (by default every other
// layer from the first), lightning attention in the "linear_attention" ones. The remote-code
// spelling attn_type_list is not read by transformers, which then alternates: refused.
void map_minimax_layers(ModelSpec& spec, const HfConfig& config) {
  // num_experts is MiniMaxConfig's other name of num_local_experts.
  if (!config.has("num_local_experts") && config.has("num_experts"))
    spec.num_local_experts = config.size_or("num_experts", spec.num_local_experts);
  std::vector<std::string> types = config.texts("layer_types");
  if (types.empty() && config.has("attn_type_list")) {
    config.at().fail("attn_type_list",
                     "is MiniMax's remote-code key, which transformers does not read; give "
                     "layer_types (\"full_attention\" / \"linear_attention\" per layer) instead");
  }
  for (std::int64_t layer = 0; types.empty() && layer < spec.num_hidden_layers; layer += 2)
    spec.attention_layers.push_back(layer);
  for (std::size_t layer = 0; layer < types.size(); ++layer) {
    if (types[layer] != "full_attention" && types[layer] != "linear_attention") {
      config.at().fail("layer_types",
                       "entries must be \"full_attention\" or \"linear_attention\", "
                       "found \"" +
                           types[layer] + "\"");
    }
    if (types[layer] == "full_attention")
      spec.attention_layers.push_back(static_cast<std::int64_t>(layer));
  }
  if (!types.empty() && static_cast<std::int64_t>(types.size()) != spec.num_hidden_layers) {
    config.at().fail("layer_types", "lists " + std::to_string(types.size()) +
                                        " layer types for num_hidden_layers = " +
                                        std::to_string(spec.num_hidden_layers));
  }
  spec.hybrid = true;
  spec.mixer = workloads::Mixer::lightning;
  // The lightning attention's decay buffers span a block of block_size positions.
  spec.ssm_state_size = config.size_or("block_size", 256);
}

// Mixtral and the families with its every-layer MoE of per-expert MLPs: the keys and defaults
// of the expert count and top-k; MiniMax-M2's sigmoid router carries a correction bias;
// HunYuan-MoE adds a shared MLP of intermediate_size.
void map_mixtral(ModelSpec& spec, const HfConfig& config, std::string_view model_type) {
  struct Defaults {
    std::string_view type, experts_key, per_token_key;
    std::int64_t experts, per_token;
  };
  static constexpr Defaults kDefaults[] = {
      {"mixtral", "num_local_experts", "num_experts_per_tok", 8, 2},
      {"phimoe", "num_local_experts", "num_experts_per_tok", 16, 2},
      {"minimax_m2", "num_local_experts", "num_experts_per_tok", 256, 8},
      {"hunyuan_v1_moe", "num_experts", "moe_topk", 1, 1},
      {"minimax", "num_local_experts", "num_experts_per_tok", 8, 2},
  };
  for (const Defaults& d : kDefaults) {
    if (d.type != model_type) continue;
    spec.num_local_experts = config.size_or(d.experts_key, d.experts);
    spec.num_experts_per_tok = config.size_or(d.per_token_key, d.per_token);
  }
  if (model_type == "phimoe") spec.lm_head_bias = config.flag_or("lm_head_bias", false);
  spec.moe_router_bias = model_type == "minimax_m2";
  if (model_type == "hunyuan_v1_moe") spec.shared_expert_intermediate_size = spec.intermediate_size;
  if (model_type == "minimax") map_minimax_layers(spec, config);
}

// Qwen2MoeConfig and its followers: every layer sparse but those in mlp_only_layers and those
// where (layer + 1) % decoder_sparse_step != 0 (families without those keys: every layer); the
// shared expert has a sigmoid gate unless the row says otherwise.
void map_sparse_moe(ModelSpec& spec, const HfConfig& config, const Traits& t) {
  // transformers 5 saves num_experts under its attribute-map name, num_local_experts.
  spec.num_local_experts =
      config.size("num_local_experts").value_or(config.size_or("num_experts", t.experts));
  // A key the row does not list is one the family's modeling code never reads.
  const auto size_if = [&](std::string_view key, std::int64_t fallback) {
    return config.declares(key) ? config.size_or(key, fallback) : fallback;
  };
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", t.per_token);
  spec.moe_intermediate_size = size_if("moe_intermediate_size", t.expert_width);
  spec.shared_expert_intermediate_size = size_if("shared_expert_intermediate_size", t.shared_width);
  spec.shared_expert_gate = spec.shared_expert_intermediate_size > 0 && !t.ungated_shared;
  spec.moe_router_bias = t.router_bias;
  const std::int64_t step = size_if("decoder_sparse_step", 1);
  if (step == 0) config.at().fail("decoder_sparse_step", "must be positive");
  const std::vector<std::int64_t> dense = config.declares("mlp_only_layers")
                                              ? config.sizes("mlp_only_layers")
                                              : std::vector<std::int64_t>{};
  for (std::int64_t layer = 0; layer < spec.num_hidden_layers; ++layer) {
    if (std::find(dense.begin(), dense.end(), layer) == dense.end() && (layer + 1) % step == 0)
      spec.moe_layers.push_back(layer);
  }
  if (!spec.moe_layers.empty()) return;
  // No MoE layer: a dense model.
  spec.num_local_experts = spec.num_experts_per_tok = spec.shared_expert_intermediate_size = 0;
  spec.shared_expert_gate = spec.moe_router_bias = false;
}

// FalconConfig: MQA (multi_query) or, with new_decoder_architecture, GQA over num_kv_heads and
// one LayerNorm each for the parallel attention and MLP; the MLP is ffn_hidden_size (4h) wide.
void map_falcon(ModelSpec& spec, const HfConfig& config) {
  spec.hf_names = workloads::HfNames::falcon;
  spec.norm = workloads::NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.fused_qkv = true;
  spec.linear_bias = config.flag_or("bias", false);
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
  spec.intermediate_size = config.size_or("ffn_hidden_size", 4 * spec.hidden_size);
  if (config.flag_or("alibi", false)) spec.position_embedding = workloads::PositionEmbedding::alibi;
  // FalconDecoderLayer: without parallel_attn, input + post-attention norms; with it, ln_attn
  // and ln_mlp when num_ln_in_parallel_attn is 2 (its default under new_decoder_architecture),
  // else one input norm.
  const bool new_architecture = config.flag_or("new_decoder_architecture", false);
  if (new_architecture) {
    spec.num_key_value_heads = config.size_or("num_kv_heads", spec.num_attention_heads);
  } else {
    spec.num_key_value_heads = config.flag_or("multi_query", true) ? 1 : spec.num_attention_heads;
  }
  const std::int64_t norms = config.size_or("num_ln_in_parallel_attn", new_architecture ? 2 : 1);
  if (!config.flag_or("parallel_attn", true)) {
    spec.norm_placement = NormPlacement::pre;
  } else {
    spec.norm_placement = norms == 2 ? NormPlacement::parallel_pair : NormPlacement::parallel;
  }
}

// The GPT-style families: LayerNorm with bias, a plain two-matrix MLP, biases on the linears.
void map_gpt_variant(HfArch arch, ModelSpec& spec, const HfConfig& config) {
  spec.norm = workloads::NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.linear_bias = true;
  switch (arch) {
    case HfArch::gpt_neox:
      // attention_bias = false drops the biases of q/k/v and dense; the MLP keeps its own.
      spec.hf_names = workloads::HfNames::gpt_neox;
      spec.fused_qkv = true;
      spec.linear_bias = false;
      spec.mlp_bias = true;
      spec.qkv_bias = spec.o_bias = config.flag_or("attention_bias", true);
      break;
    case HfArch::phi:
      // LayerNorms [head_dim] with biases on q and k.
      spec.qk_norm = config.flag_or("qk_layernorm", false);
      spec.qk_norm_shape = QkNormShape::head_dim;
      spec.hf_names = workloads::HfNames::phi;
      spec.norm_placement = NormPlacement::parallel;
      spec.lm_head_bias = true;
      break;
    case HfArch::starcoder2:
      spec.hf_names = workloads::HfNames::starcoder2;
      spec.linear_bias = config.flag_or("use_bias", true);
      spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
      break;
    default:
      break;
  }
}

ModelSpec map_spec(const ArchName& arch, const HfConfig& config) {
  if (arch.arch == HfArch::own_keys) return hf::map_own_keys_family(arch.model_type, config);
  ModelSpec spec;
  spec.hidden_size = config.required_size("hidden_size");
  // The DeepSeek-style families need it for their dense layers only (validate() checks).
  if (arch.arch == HfArch::deepseek || arch.arch == HfArch::sparse_moe)
    spec.intermediate_size = config.size_or("intermediate_size", 0);
  else if (arch.arch != HfArch::falcon)
    spec.intermediate_size = config.required_size("intermediate_size");
  spec.num_hidden_layers = config.required_size("num_hidden_layers");
  spec.num_attention_heads = config.required_size("num_attention_heads");
  spec.num_key_value_heads = config.size_or("num_key_value_heads", spec.num_attention_heads);
  spec.vocab_size = config.required_size("vocab_size");
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 0);
  spec.position_embedding = workloads::PositionEmbedding::rope;
  spec.embedding_norm = false;
  apply_traits(spec, config, arch.traits);
  switch (arch.arch) {
    case HfArch::dense:
      if (arch.model_type == "cohere") spec.qk_norm = config.flag_or("use_qk_norm", false);
      break;
    case HfArch::mixtral:
      map_mixtral(spec, config, arch.model_type);
      break;
    case HfArch::deepseek:
      hf::map_deepseek(spec, config, arch.model_type);
      break;
    case HfArch::sparse_moe:
      map_sparse_moe(spec, config, arch.traits);
      break;
    case HfArch::falcon:
      map_falcon(spec, config);
      break;
    case HfArch::fused_moe:
      hf::map_fused_moe(spec, config, arch.model_type);
      break;
    case HfArch::own_keys:
      break;
    case HfArch::gpt_neox:
    case HfArch::phi:
    case HfArch::starcoder2:
      map_gpt_variant(arch.arch, spec, config);
      break;
  }
  if (arch.reads_head_dim) spec.head_dim = config.size_or("head_dim", 0);
  return spec;
}

// The HF key a ModelSpec key came from, for pointing a validation error at its line.
std::string hf_key(const ArchName& arch, const std::string& spec_key) {
  const bool deepseek = arch.arch == HfArch::deepseek;
  if (deepseek && spec_key == "num_local_experts")
    return std::string(hf::deepseek_experts_key(arch.model_type));
  if (arch.arch == HfArch::sparse_moe && spec_key == "num_local_experts") return "num_experts";
  if (arch.model_type == "aria_text" && spec_key == "num_local_experts") return "moe_num_experts";
  if (arch.model_type == "aria_text" && spec_key == "num_experts_per_tok") return "moe_topk";
  if (arch.arch == HfArch::falcon && spec_key == "num_key_value_heads") return "num_kv_heads";
  if (arch.arch == HfArch::falcon && spec_key == "intermediate_size") return "ffn_hidden_size";
  if (arch.arch == HfArch::own_keys) return hf::own_keys_family_key(arch.model_type, spec_key);
  return spec_key;
}

// config.json is named after its directory (models/Meta-Llama-3-8B/config.json); any other
// file after its stem.
std::string name_from_source(const std::string& source) {
  const std::filesystem::path path(source);
  if (path.filename() == "config.json") {
    std::error_code ec;
    const std::filesystem::path full = std::filesystem::absolute(path, ec).lexically_normal();
    const std::string directory = (ec ? path : full).parent_path().filename().string();
    if (!directory.empty() && directory != "." && directory != "..") return directory;
  }
  return path.stem().string();
}

Json parse_json(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte counts from 1 and points at the offending character, or one past the end when
    // the input stops early; then the last line with content is the one to look at.
    std::size_t offset = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    if (offset == text.size()) {
      const std::size_t last = text.find_last_not_of(" \t\r\n");
      offset = last == std::string_view::npos ? 0 : last;
    }
    const std::int64_t line = line_at(text, offset);
    std::string what = e.what();  // "[json.exception...] parse error at line L, column C: why"
    if (const std::size_t colon = what.find(": "); colon != std::string::npos) {
      what = what.substr(colon + 2);
    }
    throw ConfigError(source, line, "", "JSON syntax error: " + what);
  } catch (const Json::out_of_range& e) {  // a number beyond double, e.g. 1e5555 (found by fuzzing)
    std::string what =
        e.what();  // "[json.exception.out_of_range.406] number overflow parsing '1e5555'"
    if (const std::size_t bracket = what.find("] "); bracket != std::string::npos)
      what = what.substr(bracket + 2);
    throw ConfigError(source, 0, "", "JSON number out of range: " + what);
  }
}

}  // namespace

workloads::ModelSpec parse_model_hf_json(std::string_view text, const std::string& source_name) {
  const Json root = parse_json(text, source_name);
  const Locator at(text, source_name);
  if (!root.is_object()) {
    throw ConfigError(source_name, 0, "",
                      "expected a JSON object at the top level, found " + describe(root));
  }
  const ArchName& arch = detect_arch(root, at);
  check_unknown_keys(root, at, arch);
  ModelSpec spec = map_spec(arch, HfConfig(root, at, consumed_keys(arch)));
  spec.name = name_from_source(source_name);
  spec.hf_save_order = hf::save_order(arch.model_type);
  try {
    spec.validate();
  } catch (const workloads::SpecError& e) {
    at.fail(hf_key(arch, e.key()), e.what());
  }
  return spec;
}

}  // namespace ckpt::harness
