// Hugging Face config.json → ModelSpec. Missing keys take the defaults of the matching
// transformers config class, so that a config saved by transformers and one trimmed by hand
// describe the same model.
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <iterator>
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
#include "harness/models/model_file.hpp"
#include "harness/common/suggest.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

using Json = nlohmann::json;
using workloads::ModelSpec;

enum class HfArch {
  llama, mistral, mixtral, qwen2, deepseek_v3, gemma, gemma2, phi3, qwen2_moe, deepseek_v2, olmo, olmo2,
  falcon, gpt_neox, phi, starcoder2, cohere
};

// The keys each architecture reads beyond kCommonKeys. A key outside these that is within edit
// distance 2 of one of them is taken for a misspelling.
constexpr std::string_view kCommonKeys[] = {"architectures",       "model_type",
                                            "hidden_size",         "intermediate_size",
                                            "num_hidden_layers",   "num_attention_heads",
                                            "num_key_value_heads", "vocab_size",
                                            "tie_word_embeddings", "max_position_embeddings"};
constexpr std::string_view kHeadDimKey = "head_dim";  // not read under MLA
constexpr std::string_view kLlamaKeys[] = {"attention_bias", "mlp_bias"};
constexpr std::string_view kMixtralKeys[] = {"num_local_experts", "num_experts_per_tok"};
// clang-format off
constexpr std::string_view kDeepseekKeys[] = {
    "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "n_shared_experts",
    "first_k_dense_replace", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
    "qk_rope_head_dim", "v_head_dim", "topk_method",
};
constexpr std::string_view kQwen2MoeKeys[] = {
    "num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
    "decoder_sparse_step", "mlp_only_layers",
};
constexpr std::string_view kFalconKeys[] = {
    "num_kv_heads", "multi_query", "parallel_attn", "new_decoder_architecture", "bias", "alibi",
    "num_ln_in_parallel_attn", "ffn_hidden_size",
};
// clang-format on
constexpr std::string_view kNeoxKeys[] = {"attention_bias"};
constexpr std::string_view kPhiKeys[] = {"qk_layernorm"};
constexpr std::string_view kStarcoder2Keys[] = {"use_bias"};
constexpr std::string_view kCohereKeys[] = {"use_qk_norm", "attention_bias"};
constexpr std::string_view kNoKeys[] = {"attention_bias"};  // refused when true

struct ArchName {
  HfArch arch;
  std::string_view model_type;
  std::string_view class_name;
  std::span<const std::string_view> keys;  // read beyond kCommonKeys
  bool reads_head_dim;
};

constexpr std::array kArchNames{
    ArchName{HfArch::llama, "llama", "LlamaForCausalLM", kLlamaKeys, true},
    ArchName{HfArch::mistral, "mistral", "MistralForCausalLM", {}, true},
    ArchName{HfArch::mixtral, "mixtral", "MixtralForCausalLM", kMixtralKeys, true},
    ArchName{HfArch::qwen2, "qwen2", "Qwen2ForCausalLM", {}, true},
    ArchName{HfArch::deepseek_v3, "deepseek_v3", "DeepseekV3ForCausalLM", kDeepseekKeys, false},
    ArchName{HfArch::gemma, "gemma", "GemmaForCausalLM", kLlamaKeys, true},
    ArchName{HfArch::gemma2, "gemma2", "Gemma2ForCausalLM", kLlamaKeys, true},
    ArchName{HfArch::phi3, "phi3", "Phi3ForCausalLM", {}, true},
    ArchName{HfArch::qwen2_moe, "qwen2_moe", "Qwen2MoeForCausalLM", kQwen2MoeKeys, true},
    ArchName{HfArch::deepseek_v2, "deepseek_v2", "DeepseekV2ForCausalLM", kDeepseekKeys, false},
    ArchName{HfArch::olmo, "olmo", "OlmoForCausalLM", kNoKeys, true},
    ArchName{HfArch::olmo2, "olmo2", "Olmo2ForCausalLM", kNoKeys, true},
    ArchName{HfArch::falcon, "falcon", "FalconForCausalLM", kFalconKeys, false},
    ArchName{HfArch::gpt_neox, "gpt_neox", "GPTNeoXForCausalLM", kNeoxKeys, false},
    ArchName{HfArch::phi, "phi", "PhiForCausalLM", kPhiKeys, false},
    ArchName{HfArch::starcoder2, "starcoder2", "Starcoder2ForCausalLM", kStarcoder2Keys, false},
    ArchName{HfArch::cohere, "cohere", "CohereForCausalLM", kCohereKeys, false},
};

const ArchName& arch_info(HfArch arch) {
  for (const ArchName& name : kArchNames) {
    if (name.arch == arch) return name;
  }
  throw std::logic_error("model_file_hf: architecture missing from kArchNames");
}

// Keys real configs carry that do not change which tensors a checkpoint holds or their
// shapes (token ids, dropout, epsilons, RoPE settings, routing hyper-parameters, dtypes,
// soft-capping, residual wiring such as use_parallel_residual).
// Except num_nextn_predict_layers: DeepSeek-V3's multi-token-prediction layer ships in the
// checkpoint but is not part of the model we lay out, so such checkpoints are undercounted.
// clang-format off
constexpr std::string_view kIgnoredKeys[] = {
    "_name_or_path", "attention_dropout", "auto_map", "bos_token_id", "eos_token_id",
    "pad_token_id", "hidden_act", "hidden_dropout", "initializer_range", "rms_norm_eps",
    "layer_norm_eps", "rope_theta", "rope_scaling", "rope_interleave", "partial_rotary_factor",
    "sliding_window", "use_sliding_window", "max_window_layers", "layer_types", "torch_dtype",
    "dtype", "transformers_version", "use_cache", "pretraining_tp", "output_router_logits",
    "router_aux_loss_coef", "router_jitter_noise", "aux_loss_alpha", "ep_size",
    "moe_layer_freq", "n_group", "topk_group", "norm_topk_prob", "routed_scaling_factor",
    "scoring_func", "seq_aux", "num_nextn_predict_layers", "quantization_config",
    "hidden_activation", "query_pre_attn_scalar", "final_logit_softcapping", "attn_logit_softcapping",
    "cache_implementation", "original_max_position_embeddings", "embd_pdrop", "resid_pdrop", "clip_qkv",
    "rotary_pct", "rotary_emb_base", "use_parallel_residual", "classifier_dropout", "norm_epsilon",
    "residual_dropout", "embedding_dropout", "logit_scale", "layer_norm_epsilon", "rope_type",
};
// clang-format on

bool contains(std::span<const std::string_view> keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::vector<std::string_view> consumed_keys(HfArch arch) {
  std::vector<std::string_view> keys(std::begin(kCommonKeys), std::end(kCommonKeys));
  const ArchName& info = arch_info(arch);
  if (info.reads_head_dim) keys.push_back(kHeadDimKey);
  keys.insert(keys.end(), info.keys.begin(), info.keys.end());
  return keys;
}

bool read_by_any_arch(std::string_view key) {
  if (contains(kCommonKeys, key) || key == kHeadDimKey) return true;
  return std::any_of(kArchNames.begin(), kArchNames.end(),
                     [key](const ArchName& name) { return contains(name.keys, key); });
}

std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a float";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::binary:
      return "binary data";
    case Json::value_t::discarded:
      return "nothing";
  }
  return "an unknown value";
}

std::int64_t line_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
}

// Points error messages at the raw text: nlohmann::json keeps no positions, so a key's line
// is that of the first `"key"` followed by optional whitespace and a colon.
class Locator {
 public:
  Locator(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  const std::string& source() const { return source_; }

  std::int64_t line_of(std::string_view key) const {
    const std::string needle = "\"" + std::string(key) + "\"";
    for (std::size_t at = text_.find(needle); at != std::string_view::npos;
         at = text_.find(needle, at + 1)) {
      const std::size_t next = text_.find_first_not_of(" \t\r\n", at + needle.size());
      if (next != std::string_view::npos && text_[next] == ':') return line_at(text_, at);
    }
    return 0;
  }

  [[noreturn]] void fail(std::string_view key, const std::string& problem) const {
    throw ConfigError(source_, line_of(key), std::string(key), problem);
  }

 private:
  std::string_view text_;
  const std::string& source_;
};

// Typed access to the top-level object, limited to the keys the architecture declares it
// reads (asking for another is a bug here, not in the file).
class HfConfig {
 public:
  HfConfig(const Json& root, const Locator& at, std::vector<std::string_view> consumed)
      : root_(root), at_(at), consumed_(std::move(consumed)) {}

  const Locator& at() const { return at_; }

  // Absent and null both read as "not given".
  std::optional<std::int64_t> size(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    return as_size(*value, key);
  }
  std::int64_t size_or(std::string_view key, std::int64_t fallback) const {
    return size(key).value_or(fallback);
  }
  std::int64_t required_size(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr) at_.fail(key, "required key is missing");
    return as_size(*value, key);
  }
  // An array of sizes; absent or null reads as empty.
  std::vector<std::int64_t> sizes(std::string_view key) const {
    const Json* value = find(key);
    std::vector<std::int64_t> out;
    if (value == nullptr || value->is_null()) return out;
    if (!value->is_array()) wrong_type(*value, key, "an array of integers");
    for (const Json& entry : *value) out.push_back(as_size(entry, key));
    return out;
  }
  bool is_null(std::string_view key) const {
    const Json* value = find(key);
    return value != nullptr && value->is_null();
  }
  bool flag_or(std::string_view key, bool fallback) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return fallback;
    if (!value->is_boolean()) wrong_type(*value, key, "a boolean");
    return value->get<bool>();
  }
  std::optional<std::string> text(std::string_view key) const {
    const Json* value = find(key);
    if (value == nullptr || value->is_null()) return std::nullopt;
    if (!value->is_string()) wrong_type(*value, key, "a string");
    return value->get<std::string>();
  }

 private:
  const Json* find(std::string_view key) const {
    if (std::find(consumed_.begin(), consumed_.end(), key) == consumed_.end()) {
      throw std::logic_error("model_file_hf: key `" + std::string(key) +
                             "` is read but not declared as consumed");
    }
    const auto it = root_.find(key);
    return it == root_.end() ? nullptr : &*it;
  }

  [[noreturn]] void wrong_type(const Json& value, std::string_view key,
                               std::string_view expected) const {
    at_.fail(key, "expected " + std::string(expected) + ", found " + describe(value));
  }

  std::int64_t as_size(const Json& value, std::string_view key) const {
    if (value.is_number_unsigned()) {
      const auto number = value.get<std::uint64_t>();
      if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        at_.fail(key, std::to_string(number) + " does not fit in a 64-bit signed integer");
      }
      return static_cast<std::int64_t>(number);
    }
    if (!value.is_number_integer()) wrong_type(value, key, "an integer");
    const auto number = value.get<std::int64_t>();
    if (number < 0) {
      at_.fail(key, "expected a non-negative integer, found " + std::to_string(number));
    }
    return number;
  }

  const Json& root_;
  const Locator& at_;
  std::vector<std::string_view> consumed_;
};

std::string supported_list() {
  std::string list;
  for (const ArchName& name : kArchNames) {
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
HfArch detect_arch(const Json& root, const Locator& at) {
  const std::vector<std::string> classes = class_names(root, at);
  const auto type_it = root.find("model_type");
  const bool has_type = type_it != root.end() && !type_it->is_null();
  if (has_type && !type_it->is_string()) {
    at.fail("model_type", "expected a string, found " + describe(*type_it));
  }
  const std::string model_type = has_type ? type_it->get<std::string>() : std::string();
  for (const ArchName& name : kArchNames) {
    if (has_type && model_type == name.model_type) return name.arch;
    if (!has_type && std::find(classes.begin(), classes.end(), name.class_name) != classes.end()) {
      return name.arch;
    }
  }
  // The other way in: a TOML model file with the architecture spelled out.
  const std::string supported =
      " — supported: " + supported_list() +
      ". For another architecture write a TOML model file instead (required keys: name, hidden_size, "
      "num_hidden_layers, num_attention_heads, vocab_size, and intermediate_size unless every layer is MoE; "
      "optional: num_key_value_heads, head_dim, tie_word_embeddings, norm, norm_placement, mlp, "
      "position_embedding, qkv_bias, linear_bias, MoE and MLA keys; see README \"Model files\") and pass its "
      "path as the model, e.g. workloads/zoo/qwen2-7b.toml";
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

void check_unknown_keys(const Json& root, const Locator& at, HfArch arch) {
  const std::vector<std::string_view> consumed = consumed_keys(arch);
  for (const auto& [key, value] : root.items()) {
    if (read_by_any_arch(key) || contains(kIgnoredKeys, key)) continue;
    std::size_t nearest = std::numeric_limits<std::size_t>::max();
    for (const std::string_view known : consumed) {
      nearest = std::min(nearest, edit_distance(key, known));
    }
    if (nearest <= 2) at.fail(key, "unknown key" + did_you_mean(key, consumed));
  }
}

void map_llama(ModelSpec& spec, const HfConfig& config) {
  const bool attention_bias = config.flag_or("attention_bias", false);
  const bool mlp_bias = config.flag_or("mlp_bias", false);
  // attention_bias puts a bias on q, k, v and o; ModelSpec has no "o only" bias, so without
  // mlp_bias it is counted as qkv_bias and the o_proj bias (hidden_size values per layer) is
  // left out. A bias on the MLP alone has no ModelSpec equivalent at all, so it is refused.
  if (attention_bias && mlp_bias) {
    spec.linear_bias = true;
  } else if (mlp_bias) {
    config.at().fail("mlp_bias",
                     "mlp_bias without attention_bias cannot be described by a ModelSpec");
  } else {
    spec.qkv_bias = attention_bias;
  }
}

// Defaults are transformers' DeepseekV3Config, or DeepseekV2Config for `v2`, which is dense
// unless n_routed_experts is given and routes greedily (no e_score_correction_bias).
void map_deepseek(ModelSpec& spec, const HfConfig& config, bool v2) {
  spec.num_local_experts = config.size_or("n_routed_experts", v2 ? 0 : 256);
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", v2 ? 0 : 8);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", v2 ? 1407 : 2048);
  spec.n_shared_experts = config.size_or("n_shared_experts", v2 ? 0 : 1);
  spec.first_k_dense_replace = config.size_or("first_k_dense_replace", v2 ? 0 : 3);
  // q_lora_rank: null means uncompressed queries (DeepSeek-V2-Lite); absent means the default.
  spec.q_lora_rank = config.is_null("q_lora_rank") ? 0 : config.size_or("q_lora_rank", 1536);
  spec.kv_lora_rank = config.size_or("kv_lora_rank", 512);
  spec.qk_nope_head_dim = config.size_or("qk_nope_head_dim", 128);
  spec.qk_rope_head_dim = config.size_or("qk_rope_head_dim", 64);
  spec.v_head_dim = config.size_or("v_head_dim", 128);
  // DeepSeek's own code adds e_score_correction_bias only for "noaux_tc"; transformers'
  // DeepseekV3 has no topk_method and always carries it.
  const std::optional<std::string> topk_method = config.text("topk_method");
  spec.moe_router_bias = topk_method ? *topk_method == "noaux_tc" : !v2;
}

// Qwen2MoeConfig: every layer sparse unless decoder_sparse_step or mlp_only_layers say
// otherwise; ModelSpec's dense layers are the leading ones (first_k_dense_replace).
void map_qwen2_moe(ModelSpec& spec, const HfConfig& config) {
  spec.qkv_bias = true;
  spec.hf_names = workloads::HfNames::qwen2_moe;
  spec.num_local_experts = config.size_or("num_experts", 60);
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 4);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", 1408);
  spec.shared_expert_intermediate_size = config.size_or("shared_expert_intermediate_size", 5632);
  spec.shared_expert_gate = spec.shared_expert_intermediate_size > 0;
  if (config.size_or("decoder_sparse_step", 1) != 1) {
    config.at().fail("decoder_sparse_step", "only decoder_sparse_step = 1 (every layer MoE) can be laid out; "
                                            "describe the model in a TOML model file instead");
  }
  const std::vector<std::int64_t> dense = config.sizes("mlp_only_layers");
  for (std::size_t i = 0; i < dense.size(); ++i) {
    if (dense[i] != static_cast<std::int64_t>(i)) {
      config.at().fail("mlp_only_layers", "only leading dense layers ([0, 1, ..., k-1]) can be laid out");
    }
  }
  spec.first_k_dense_replace = static_cast<std::int64_t>(dense.size());
}

// FalconConfig: MQA (multi_query) or, with new_decoder_architecture, GQA over num_kv_heads and
// one LayerNorm each for the parallel attention and MLP; the MLP is ffn_hidden_size (4h) wide.
void map_falcon(ModelSpec& spec, const HfConfig& config) {
  using workloads::NormPlacement;
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

// Llama's layout with other norms or names: the families that differ from Llama only in
// which tensors exist, not in how attention or the MLP are built.
void map_llama_variant(HfArch arch, ModelSpec& spec, const HfConfig& config) {
  using workloads::NormPlacement;
  switch (arch) {
    case HfArch::gemma:
    case HfArch::gemma2:
      map_llama(spec, config);
      spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
      if (arch == HfArch::gemma2) spec.norm_placement = NormPlacement::sandwich;
      break;
    case HfArch::phi3:
      spec.fused_qkv = true;
      spec.fused_gate_up = true;
      break;
    case HfArch::olmo:
    case HfArch::olmo2:
      if (config.flag_or("attention_bias", false)) config.at().fail("attention_bias", "attention_bias = true is not supported for OLMo");
      spec.norm = arch == HfArch::olmo ? workloads::NormKind::none : workloads::NormKind::rmsnorm;
      if (arch == HfArch::olmo2) {
        spec.norm_placement = NormPlacement::post;
        spec.qk_norm = true;
      }
      break;
    case HfArch::cohere:
      // LayerNorm without bias: one weight vector, the same tensors as an RMSNorm.
      if (config.flag_or("attention_bias", false)) config.at().fail("attention_bias", "attention_bias = true is not supported for Cohere");
      spec.hf_names = workloads::HfNames::cohere;
      spec.norm_placement = NormPlacement::parallel;
      spec.qk_norm = config.flag_or("use_qk_norm", false);
      spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", true);
      break;
    default:
      break;
  }
}

// The GPT-style families: LayerNorm with bias, a plain two-matrix MLP, biases on the linears.
void map_gpt_variant(HfArch arch, ModelSpec& spec, const HfConfig& config) {
  using workloads::NormPlacement;
  spec.norm = workloads::NormKind::layernorm;
  spec.mlp = workloads::MlpKind::plain;
  spec.linear_bias = true;
  switch (arch) {
    case HfArch::gpt_neox:
      // The MLP always has biases; without attention_bias only q/k/v/dense lose theirs, which
      // ModelSpec cannot say.
      if (!config.flag_or("attention_bias", true)) {
        config.at().fail("attention_bias", "attention_bias = false (biases on the MLP only) is not supported");
      }
      spec.hf_names = workloads::HfNames::gpt_neox;
      spec.fused_qkv = true;
      break;
    case HfArch::phi:
      if (config.flag_or("qk_layernorm", false)) config.at().fail("qk_layernorm", "qk_layernorm = true is not supported");
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

ModelSpec map_spec(HfArch arch, const HfConfig& config) {
  ModelSpec spec;
  spec.hidden_size = config.required_size("hidden_size");
  if (arch != HfArch::falcon) spec.intermediate_size = config.required_size("intermediate_size");
  spec.num_hidden_layers = config.required_size("num_hidden_layers");
  spec.num_attention_heads = config.required_size("num_attention_heads");
  spec.num_key_value_heads = config.size_or("num_key_value_heads", spec.num_attention_heads);
  spec.vocab_size = config.required_size("vocab_size");
  spec.tie_word_embeddings = config.flag_or("tie_word_embeddings", false);
  spec.max_position_embeddings = config.size_or("max_position_embeddings", 0);
  spec.norm = workloads::NormKind::rmsnorm;
  spec.mlp = workloads::MlpKind::gated;
  spec.position_embedding = workloads::PositionEmbedding::rope;
  spec.embedding_norm = false;
  switch (arch) {
    case HfArch::llama:
      map_llama(spec, config);
      break;
    case HfArch::mistral:
      break;
    case HfArch::mixtral:
      spec.num_local_experts = config.size_or("num_local_experts", 8);
      spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 2);
      break;
    case HfArch::qwen2:
      spec.qkv_bias = true;
      break;
    case HfArch::deepseek_v3:
    case HfArch::deepseek_v2:
      map_deepseek(spec, config, arch == HfArch::deepseek_v2);
      break;
    case HfArch::qwen2_moe:
      map_qwen2_moe(spec, config);
      break;
    case HfArch::falcon:
      map_falcon(spec, config);
      break;
    case HfArch::gemma:
    case HfArch::gemma2:
    case HfArch::phi3:
    case HfArch::olmo:
    case HfArch::olmo2:
    case HfArch::cohere:
      map_llama_variant(arch, spec, config);
      break;
    case HfArch::gpt_neox:
    case HfArch::phi:
    case HfArch::starcoder2:
      map_gpt_variant(arch, spec, config);
      break;
  }
  if (arch_info(arch).reads_head_dim) spec.head_dim = config.size_or("head_dim", 0);
  return spec;
}

// The HF key a ModelSpec key came from, for pointing a validation error at its line.
std::string hf_key(HfArch arch, const std::string& spec_key) {
  const bool deepseek = arch == HfArch::deepseek_v3 || arch == HfArch::deepseek_v2;
  if (deepseek && spec_key == "num_local_experts") return "n_routed_experts";
  if (deepseek && spec_key == "moe_router_bias") return "topk_method";
  if (arch == HfArch::qwen2_moe && spec_key == "num_local_experts") return "num_experts";
  if (arch == HfArch::falcon && spec_key == "num_key_value_heads") return "num_kv_heads";
  if (arch == HfArch::falcon && spec_key == "intermediate_size") return "ffn_hidden_size";
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
    std::string what = e.what();           // "[json.exception.out_of_range.406] number overflow parsing '1e5555'"
    if (const std::size_t bracket = what.find("] "); bracket != std::string::npos) what = what.substr(bracket + 2);
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
  const HfArch arch = detect_arch(root, at);
  check_unknown_keys(root, at, arch);
  ModelSpec spec = map_spec(arch, HfConfig(root, at, consumed_keys(arch)));
  spec.name = name_from_source(source_name);
  try {
    spec.validate();
  } catch (const workloads::SpecError& e) {
    at.fail(hf_key(arch, e.key()), e.what());
  }
  return spec;
}

}  // namespace ckpt::harness
