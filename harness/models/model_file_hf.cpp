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

enum class HfArch { llama, mistral, mixtral, qwen2, deepseek_v3 };

struct ArchName {
  HfArch arch;
  std::string_view model_type;
  std::string_view class_name;
};

constexpr std::array kArchNames{
    ArchName{HfArch::llama, "llama", "LlamaForCausalLM"},
    ArchName{HfArch::mistral, "mistral", "MistralForCausalLM"},
    ArchName{HfArch::mixtral, "mixtral", "MixtralForCausalLM"},
    ArchName{HfArch::qwen2, "qwen2", "Qwen2ForCausalLM"},
    ArchName{HfArch::deepseek_v3, "deepseek_v3", "DeepseekV3ForCausalLM"},
};

// The keys each architecture reads. A key outside these that is within edit distance 2 of
// one of them is taken for a misspelling.
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
// clang-format on

// Keys real configs carry that do not change which tensors a checkpoint holds or their
// shapes (token ids, dropout, epsilons, RoPE settings, routing hyper-parameters, dtypes).
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
};
// clang-format on

bool contains(std::span<const std::string_view> keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::vector<std::string_view> consumed_keys(HfArch arch) {
  std::vector<std::string_view> keys(std::begin(kCommonKeys), std::end(kCommonKeys));
  if (arch != HfArch::deepseek_v3) keys.push_back(kHeadDimKey);
  if (arch == HfArch::llama) keys.insert(keys.end(), std::begin(kLlamaKeys), std::end(kLlamaKeys));
  if (arch == HfArch::mixtral) {
    keys.insert(keys.end(), std::begin(kMixtralKeys), std::end(kMixtralKeys));
  }
  if (arch == HfArch::deepseek_v3) {
    keys.insert(keys.end(), std::begin(kDeepseekKeys), std::end(kDeepseekKeys));
  }
  return keys;
}

bool read_by_any_arch(std::string_view key) {
  return contains(kCommonKeys, key) || key == kHeadDimKey || contains(kLlamaKeys, key) ||
         contains(kMixtralKeys, key) || contains(kDeepseekKeys, key);
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
  const std::string supported = " — supported: " + supported_list();
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

void map_deepseek_v3(ModelSpec& spec, const HfConfig& config) {
  // Defaults are transformers' DeepseekV3Config.
  spec.num_local_experts = config.size_or("n_routed_experts", 256);
  spec.num_experts_per_tok = config.size_or("num_experts_per_tok", 8);
  spec.moe_intermediate_size = config.size_or("moe_intermediate_size", 2048);
  spec.n_shared_experts = config.size_or("n_shared_experts", 1);
  spec.first_k_dense_replace = config.size_or("first_k_dense_replace", 3);
  // q_lora_rank: null means uncompressed queries (DeepSeek-V2-Lite); absent means the default.
  spec.q_lora_rank = config.is_null("q_lora_rank") ? 0 : config.size_or("q_lora_rank", 1536);
  spec.kv_lora_rank = config.size_or("kv_lora_rank", 512);
  spec.qk_nope_head_dim = config.size_or("qk_nope_head_dim", 128);
  spec.qk_rope_head_dim = config.size_or("qk_rope_head_dim", 64);
  spec.v_head_dim = config.size_or("v_head_dim", 128);
  // DeepSeek's own code adds e_score_correction_bias only for "noaux_tc"; transformers'
  // DeepseekV3 has no topk_method and always carries it.
  const std::optional<std::string> topk_method = config.text("topk_method");
  spec.moe_router_bias = !topk_method || *topk_method == "noaux_tc";
}

ModelSpec map_spec(HfArch arch, const HfConfig& config) {
  ModelSpec spec;
  spec.hidden_size = config.required_size("hidden_size");
  spec.intermediate_size = config.required_size("intermediate_size");
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
      map_deepseek_v3(spec, config);
      break;
  }
  if (arch != HfArch::deepseek_v3) spec.head_dim = config.size_or("head_dim", 0);
  return spec;
}

// The HF key a ModelSpec key came from, for pointing a validation error at its line.
std::string hf_key(HfArch arch, const std::string& spec_key) {
  if (arch == HfArch::deepseek_v3 && spec_key == "num_local_experts") return "n_routed_experts";
  if (arch == HfArch::deepseek_v3 && spec_key == "moe_router_bias") return "topk_method";
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
