// Our model TOML format, and reading either format from disk. The Hugging Face reader is
// parse_model_hf_json.
#include "harness/models/model_file.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "harness/common/config_error.hpp"
#include "harness/common/config_text.hpp"
#include "harness/common/suggest.hpp"
#include "harness/models/hf_save_orders.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

using workloads::HfNames;
using workloads::MlpKind;
using workloads::ModelSpec;
using workloads::NormKind;
using workloads::NormPlacement;
using workloads::PositionEmbedding;
using workloads::QkNormShape;

struct IntKey {
  std::string_view key;
  std::int64_t ModelSpec::*member;
  bool required;
};

constexpr std::array kIntKeys{
    IntKey{"hidden_size", &ModelSpec::hidden_size, true},
    IntKey{"intermediate_size", &ModelSpec::intermediate_size, false},
    IntKey{"num_hidden_layers", &ModelSpec::num_hidden_layers, true},
    IntKey{"num_attention_heads", &ModelSpec::num_attention_heads, true},
    IntKey{"num_key_value_heads", &ModelSpec::num_key_value_heads, false},
    IntKey{"head_dim", &ModelSpec::head_dim, false},
    IntKey{"vocab_size", &ModelSpec::vocab_size, true},
    IntKey{"max_position_embeddings", &ModelSpec::max_position_embeddings, false},
    IntKey{"num_local_experts", &ModelSpec::num_local_experts, false},
    IntKey{"num_experts_per_tok", &ModelSpec::num_experts_per_tok, false},
    IntKey{"moe_intermediate_size", &ModelSpec::moe_intermediate_size, false},
    IntKey{"n_shared_experts", &ModelSpec::n_shared_experts, false},
    IntKey{"first_k_dense_replace", &ModelSpec::first_k_dense_replace, false},
    IntKey{"shared_expert_intermediate_size", &ModelSpec::shared_expert_intermediate_size, false},
    IntKey{"q_lora_rank", &ModelSpec::q_lora_rank, false},
    IntKey{"kv_lora_rank", &ModelSpec::kv_lora_rank, false},
    IntKey{"qk_nope_head_dim", &ModelSpec::qk_nope_head_dim, false},
    IntKey{"qk_rope_head_dim", &ModelSpec::qk_rope_head_dim, false},
    IntKey{"v_head_dim", &ModelSpec::v_head_dim, false},
};

struct BoolKey {
  std::string_view key;
  bool ModelSpec::*member;
};

constexpr std::array kBoolKeys{
    BoolKey{"tie_word_embeddings", &ModelSpec::tie_word_embeddings},
    BoolKey{"linear_bias", &ModelSpec::linear_bias},
    BoolKey{"qkv_bias", &ModelSpec::qkv_bias},
    BoolKey{"o_bias", &ModelSpec::o_bias},
    BoolKey{"mlp_bias", &ModelSpec::mlp_bias},
    BoolKey{"embedding_norm", &ModelSpec::embedding_norm},
    BoolKey{"moe_router_bias", &ModelSpec::moe_router_bias},
    BoolKey{"qk_norm", &ModelSpec::qk_norm},
    BoolKey{"lm_head_bias", &ModelSpec::lm_head_bias},
    BoolKey{"fused_qkv", &ModelSpec::fused_qkv},
    BoolKey{"fused_gate_up", &ModelSpec::fused_gate_up},
    BoolKey{"shared_expert_gate", &ModelSpec::shared_expert_gate},
};

template <typename Enum>
struct Choice {
  std::string_view name;
  Enum value;
};

constexpr std::array kNormChoices{Choice<NormKind>{"rmsnorm", NormKind::rmsnorm},
                                  Choice<NormKind>{"layernorm", NormKind::layernorm},
                                  Choice<NormKind>{"none", NormKind::none}};
constexpr std::array kPlacementChoices{
    Choice<NormPlacement>{"pre", NormPlacement::pre},
    Choice<NormPlacement>{"parallel", NormPlacement::parallel},
    Choice<NormPlacement>{"parallel_pair", NormPlacement::parallel_pair},
    Choice<NormPlacement>{"sandwich", NormPlacement::sandwich},
    Choice<NormPlacement>{"post", NormPlacement::post}};
constexpr std::array kHfNamesChoices{Choice<HfNames>{"llama", HfNames::llama},
                                     Choice<HfNames>{"qwen2_moe", HfNames::qwen2_moe},
                                     Choice<HfNames>{"falcon", HfNames::falcon},
                                     Choice<HfNames>{"gpt_neox", HfNames::gpt_neox},
                                     Choice<HfNames>{"phi", HfNames::phi},
                                     Choice<HfNames>{"starcoder2", HfNames::starcoder2},
                                     Choice<HfNames>{"cohere", HfNames::cohere},
                                     Choice<HfNames>{"glm4", HfNames::glm4},
                                     Choice<HfNames>{"deepseek", HfNames::deepseek},
                                     Choice<HfNames>{"vaultgemma", HfNames::vaultgemma}};
constexpr std::array kQkNormShapeChoices{Choice<QkNormShape>{"all_heads", QkNormShape::all_heads},
                                         Choice<QkNormShape>{"per_head", QkNormShape::per_head},
                                         Choice<QkNormShape>{"head_dim", QkNormShape::head_dim}};
constexpr std::array kMlpChoices{Choice<MlpKind>{"gated", MlpKind::gated},
                                 Choice<MlpKind>{"plain", MlpKind::plain}};
constexpr std::array kPositionChoices{
    Choice<PositionEmbedding>{"rope", PositionEmbedding::rope},
    Choice<PositionEmbedding>{"learned", PositionEmbedding::learned},
    Choice<PositionEmbedding>{"alibi", PositionEmbedding::alibi}};

// Free-text keys: checked to be strings, otherwise ignored.
constexpr std::array<std::string_view, 2> kTextKeys{"description", "source"};

std::vector<std::string_view> known_keys() {
  std::vector<std::string_view> keys{"name",          "norm", "norm_placement",    "hf_names",
                                     "qk_norm_shape", "mlp",  "position_embedding"};
  for (const IntKey& k : kIntKeys) keys.push_back(k.key);
  for (const BoolKey& k : kBoolKeys) keys.push_back(k.key);
  keys.insert(keys.end(), kTextKeys.begin(), kTextKeys.end());
  return keys;
}

std::int64_t line_of(const toml::node& node, const toml::key& key) {
  const auto line = node.source().begin.line;
  return static_cast<std::int64_t>(line > 0 ? line : key.source().begin.line);
}

// One top-level entry of the file, with what error messages need to point at it.
struct Entry {
  std::string_view key;
  const toml::node* node;
  std::int64_t line;
  const std::string* source;

  [[noreturn]] void fail(const std::string& problem) const {
    throw ConfigError(*source, line, std::string(key), problem);
  }
  [[noreturn]] void wrong_type(std::string_view expected) const {
    fail("expected " + std::string(expected) + ", found " + describe_toml_type(node->type()));
  }

  std::int64_t as_size() const {
    if (!node->is_integer()) wrong_type("an integer");
    const std::int64_t value = node->as_integer()->get();
    if (value < 0) fail("expected a non-negative integer, found " + std::to_string(value));
    return value;
  }
  bool as_bool() const {
    if (!node->is_boolean()) wrong_type("a boolean");
    return node->as_boolean()->get();
  }
  const std::string& as_string() const {
    if (!node->is_string()) wrong_type("a string");
    return node->as_string()->get();
  }

  template <typename Enum, std::size_t N>
  Enum as_choice(const std::array<Choice<Enum>, N>& choices) const {
    const std::string& text = as_string();
    std::string listed;
    for (const Choice<Enum>& choice : choices) {
      if (choice.name == text) return choice.value;
      listed += (listed.empty() ? "\"" : ", \"") + std::string(choice.name) + "\"";
    }
    fail("unknown value \"" + text + "\" — expected one of " + listed);
  }
};

// Stores the entry's value in `spec`; false when the key is not one of ours.
bool assign(ModelSpec& spec, const Entry& entry) {
  const std::string_view key = entry.key;
  for (const IntKey& k : kIntKeys) {
    if (k.key == key) {
      spec.*k.member = entry.as_size();
      return true;
    }
  }
  for (const BoolKey& k : kBoolKeys) {
    if (k.key == key) {
      spec.*k.member = entry.as_bool();
      return true;
    }
  }
  if (key == "name") {
    spec.name = entry.as_string();
    if (spec.name.empty()) entry.fail("must not be empty");
  } else if (key == "norm") {
    spec.norm = entry.as_choice(kNormChoices);
  } else if (key == "norm_placement") {
    spec.norm_placement = entry.as_choice(kPlacementChoices);
  } else if (key == "hf_names") {
    spec.hf_names = entry.as_choice(kHfNamesChoices);
  } else if (key == "qk_norm_shape") {
    spec.qk_norm_shape = entry.as_choice(kQkNormShapeChoices);
  } else if (key == "mlp") {
    spec.mlp = entry.as_choice(kMlpChoices);
  } else if (key == "position_embedding") {
    spec.position_embedding = entry.as_choice(kPositionChoices);
  } else if (std::find(kTextKeys.begin(), kTextKeys.end(), key) != kTextKeys.end()) {
    entry.as_string();
  } else {
    return false;
  }
  return true;
}

[[noreturn]] void fail_unknown(const Entry& entry) {
  const std::vector<std::string_view> keys = known_keys();
  std::string problem = "unknown key" + did_you_mean(entry.key, keys);
  if (entry.node->is_table()) {
    problem += " (model files are flat: write every key at the top level)";
  }
  entry.fail(problem);
}

void require_keys(const toml::table& table, const std::string& source) {
  if (!table.contains("name")) throw ConfigError(source, 0, "name", "required key is missing");
  for (const IntKey& k : kIntKeys) {
    if (k.required && !table.contains(k.key)) {
      throw ConfigError(source, 0, std::string(k.key), "required key is missing");
    }
  }
}

toml::table parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, std::string_view(source));
  } catch (const toml::parse_error& e) {
    throw ConfigError(source, static_cast<std::int64_t>(e.source().begin.line), "",
                      "TOML syntax error: " + std::string(e.description()));
  }
}

void validate_spec(const ModelSpec& spec, const toml::table& table, const std::string& source) {
  try {
    spec.validate();
  } catch (const workloads::SpecError& e) {
    std::int64_t line = 0;
    if (const toml::node* node = table.get(e.key())) {
      line = static_cast<std::int64_t>(node->source().begin.line);
    }
    throw ConfigError(source, line, e.key(), e.what());
  }
}

}  // namespace

workloads::ModelSpec parse_model_toml(std::string_view text, const std::string& source_name) {
  const toml::table table = parse_toml(text, source_name);

  // Visit entries in file order so that the first problem reported is the first in the file.
  std::vector<Entry> entries;
  for (const auto& [key, node] : table) {
    entries.push_back(Entry{key.str(), &node, line_of(node, key), &source_name});
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.line < b.line; });

  ModelSpec spec;
  for (const Entry& entry : entries) {
    if (!assign(spec, entry)) fail_unknown(entry);
  }
  require_keys(table, source_name);
  validate_spec(spec, table, source_name);
  spec.hf_save_order = hf::save_order_of_names(spec);
  return spec;
}

workloads::ModelSpec load_model_toml(const std::filesystem::path& path) {
  return parse_model_toml(read_config_file(path, "file does not exist", "cannot be read: "),
                          path.string());
}

workloads::ModelSpec load_model_hf_json(const std::filesystem::path& path) {
  return parse_model_hf_json(read_config_file(path, "file does not exist", "cannot be read: "),
                             path.string());
}

}  // namespace ckpt::harness
