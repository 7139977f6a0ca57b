#include "workloads/parallel_validation.hpp"

#include <string>
#include <vector>

#include "workloads/checked_math.hpp"
#include "workloads/limits.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

// Sizes that tensor parallelism divides.
std::vector<std::pair<const char*, std::int64_t>> tp_divided_sizes(const ModelSpec& m) {
  std::vector<std::pair<const char*, std::int64_t>> sizes{
      {"num_attention_heads", m.num_attention_heads}};
  // The SSM heads are the attention heads of a plain Mamba-2 model; hybrids have both.
  const bool ssm_heads = m.mixer == Mixer::mamba2 || m.mixer == Mixer::gated_delta_net;
  const bool beside_attention = m.is_hybrid() || !m.layer_kinds.empty();
  if (ssm_heads) sizes.emplace_back("n_groups", m.ssm_groups);
  if (beside_attention && ssm_heads) sizes.emplace_back("num_heads", m.ssm_heads);
  // Mamba with heads (Zamba) splits its per-head tensors by head.
  if (m.mixer == Mixer::mamba && m.ssm_heads > 0) sizes.emplace_back("num_heads", m.ssm_heads);
  if (beside_attention) sizes.emplace_back("ssm intermediate size", m.ssm_inner_size);
  if (!m.uses_mla()) sizes.emplace_back("num_key_value_heads", m.num_key_value_heads);
  const bool has_dense_layers = m.moe_layer_count() < m.num_hidden_layers;
  if (has_dense_layers) sizes.emplace_back("intermediate_size", m.intermediate_size);
  if (m.is_moe()) {
    sizes.emplace_back(m.moe_intermediate_size > 0 ? "moe_intermediate_size" : "intermediate_size",
                       m.expert_intermediate_size());
  }
  return sizes;
}

std::string valid_tp_values(const ModelSpec& m) {
  std::string list;
  const auto sizes = tp_divided_sizes(m);
  for (std::int64_t tp = 1; tp <= m.num_attention_heads; ++tp) {
    bool ok = true;
    for (const auto& [key, size] : sizes) ok = ok && size % tp == 0;
    if (ok) list += (list.empty() ? "" : ", ") + std::to_string(tp);
  }
  return list;
}

void validate_tp(const ModelSpec& m, std::int64_t tp) {
  for (const auto& [key, size] : tp_divided_sizes(m)) {
    if (size % tp == 0) continue;
    std::string why = std::string(key) + " (" + std::to_string(size) +
                      ") is not divisible by tp (" + std::to_string(tp) + ")";
    if (std::string(key) == "num_key_value_heads") {
      why += ": Megatron-core gives every TP rank whole KV heads and does not replicate them";
    }
    throw SpecError("tp", why + "; valid tp for " + (m.name.empty() ? "this model" : m.name) +
                              ": " + valid_tp_values(m));
  }
}

void validate_ep(const ModelSpec& m, const ParallelSpec& p) {
  if (p.ep == 1) return;
  if (!m.is_moe()) {
    throw SpecError("ep", "ep = " + std::to_string(p.ep) + " needs an MoE model, but " +
                              (m.name.empty() ? "this model" : m.name) +
                              " has no experts; use ep = 1");
  }
  if (m.num_local_experts % p.ep != 0) {
    throw SpecError("ep", "num_local_experts (" + std::to_string(m.num_local_experts) +
                              ") is not divisible by ep (" + std::to_string(p.ep) + ")");
  }
  if (p.dp % p.ep != 0) {
    throw SpecError("ep", "dp (" + std::to_string(p.dp) + ") is not divisible by ep (" +
                              std::to_string(p.ep) +
                              "): expert parallelism subdivides the data-parallel group");
  }
}

// Degrees each below its bound, and the world tp × pp × dp at most limits::kWorldSize ranks
// (the layout summary visits pp × dp ranks; a dry run plans every selected one).
void validate_world(const ModelSpec& m, const ParallelSpec& p) {
  require_at_most(p.tp, limits::kHeads, "tp");
  require_at_most(p.pp, limits::kLayers, "pp");
  require_at_most(p.dp, limits::kWorldSize, "dp");
  require_at_most(p.ep, limits::kWorldSize, "ep");
  require_at_most(p.vocab_divisor, limits::kVocabDivisor, "vocab_divisor");
  require_at_most(p.pp_first_stage_layers, m.num_hidden_layers, "pp_first_stage_layers");
  require_at_most(p.pp_last_stage_layers, m.num_hidden_layers, "pp_last_stage_layers");
  const std::int64_t world = p.tp * p.pp * p.dp;  // < 2^48 after the bounds above
  if (world > limits::kWorldSize) {
    throw SpecError("dp", "the world of tp × pp × dp = " + std::to_string(p.tp) + " × " +
                              std::to_string(p.pp) + " × " + std::to_string(p.dp) + " = " +
                              std::to_string(world) + " ranks exceeds the largest allowed, " +
                              std::to_string(limits::kWorldSize) +
                              " ranks; the largest dp allowed with tp = " + std::to_string(p.tp) +
                              " and pp = " + std::to_string(p.pp) + " is " +
                              std::to_string(limits::kWorldSize / (p.tp * p.pp)));
  }
}

}  // namespace

void validate_parallelism(const ModelSpec& model, const ParallelSpec& parallel) {
  require_positive(parallel.tp, "tp");
  require_positive(parallel.pp, "pp");
  require_positive(parallel.dp, "dp");
  require_positive(parallel.ep, "ep");
  require_positive(parallel.vocab_divisor, "vocab_divisor");
  if (parallel.zero_stage < 0 || parallel.zero_stage > 3) {
    throw SpecError("zero",
                    "zero must be 0, 1, 2 or 3 (got " + std::to_string(parallel.zero_stage) + ")");
  }
  if (parallel.zero_sharding == ZeroSharding::per_tensor && parallel.zero_stage != 3) {
    throw SpecError("zero_sharding",
                    "zero_sharding = \"per_tensor\" shards the weights and the optimizer state of "
                    "every tensor over the DP ranks (FSDP2), which is ZeRO stage 3; zero is " +
                        std::to_string(parallel.zero_stage) +
                        ": set zero = 3, or zero_sharding = \"flat\"");
  }
  validate_world(model, parallel);
  validate_tp(model, parallel.tp);
  validate_ep(model, parallel);
}

void validate_tp_splits(const TensorCatalog& catalog, std::int64_t tp) {
  std::vector<const std::vector<TensorDef>*> parts{&catalog.first_stage, &catalog.expert,
                                                   &catalog.last_stage};
  for (const LayerTemplate& t : catalog.layer_templates) parts.push_back(&t.tensors);
  for (const auto* part : parts) {
    for (const TensorDef& def : *part) {
      if (def.split == TpSplit::replicated) continue;
      const std::size_t dim = split_dim(def.split);
      if (def.shape.at(dim) % tp != 0) {
        throw SpecError("tp", "tensor " + def.pattern + " has dimension " + std::to_string(dim) +
                                  " of size " + std::to_string(def.shape[dim]) +
                                  ", not divisible by tp (" + std::to_string(tp) + ")");
      }
    }
  }
}

}  // namespace ckpt::workloads
