#include "harness/cli/models_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>

#include "harness/common/text_format.hpp"
#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

std::string features(const workloads::ModelSpec& m) {
  std::string f(workloads::norm_name(m.norm));
  if (m.norm_placement != workloads::NormPlacement::pre)
    f += " " + std::string(workloads::norm_placement_name(m.norm_placement));
  f += ", " + std::string(workloads::mlp_name(m.mlp)) + " mlp";
  f += ", " + std::string(workloads::position_embedding_name(m.position_embedding));
  if (m.uses_mla())
    f += ", mla";
  else if (m.num_key_value_heads == 1)
    f += ", mqa";
  else if (m.num_key_value_heads < m.num_attention_heads)
    f += ", gqa";
  if (m.is_moe()) f += fmt::format(", moe {}×top{}", m.num_local_experts, m.num_experts_per_tok);
  if (m.n_shared_experts > 0) f += fmt::format("+{} shared", m.n_shared_experts);
  if (m.shared_expert_intermediate_size > 0)
    f += m.shared_expert_gate ? "+gated shared" : "+shared";
  if (m.fused_qkv || m.fused_gate_up) f += ", fused hf tensors";
  if (m.qk_norm) f += ", qk norm";
  if (m.linear_bias)
    f += ", biases";
  else if (m.qkv_bias)
    f += ", qkv bias";
  if (m.tie_word_embeddings) f += ", tied";
  return f;
}

}  // namespace

CLI::App* add_models_command(CLI::App& app, ModelsOptions& o) {
  CLI::App* cmd = app.add_subcommand("models", "List the model zoo with parameter counts");
  cmd->add_flag("--json", o.json, "Print a JSON array");
  return cmd;
}

void run_models(const ModelsOptions& o, std::ostream& out) {
  nlohmann::json list = nlohmann::json::array();
  if (!o.json) {
    fmt::print(out, "{:<18} {:>21} {:>7} {:>7} {:>9}  {}\n", "model", "parameters", "layers",
               "hidden", "heads/kv", "architecture");
  }
  for (const ZooEntry& entry : zoo_entries()) {
    const workloads::ModelSpec model = zoo_model(entry.name);
    workloads::StateSpec weights;
    weights.scope = workloads::StateScope::weights;
    const workloads::Layout layout(model, {}, weights);
    const workloads::ModelSpec& m = layout.model();
    if (o.json) {
      list.push_back({{"name", m.name},
                      {"parameters", layout.parameters()},
                      {"num_hidden_layers", m.num_hidden_layers},
                      {"hidden_size", m.hidden_size},
                      {"num_attention_heads", m.num_attention_heads},
                      {"num_key_value_heads", m.num_key_value_heads},
                      {"num_local_experts", m.num_local_experts},
                      {"vocab_size", m.vocab_size}});
      continue;
    }
    fmt::print(out, "{:<18} {:>21} {:>7} {:>7} {:>9}  {}\n", m.name,
               group_digits(layout.parameters()), m.num_hidden_layers, m.hidden_size,
               fmt::format("{}/{}", m.num_attention_heads, m.num_key_value_heads), features(m));
  }
  if (o.json) out << list.dump() << '\n';
}

}  // namespace ckpt::harness
