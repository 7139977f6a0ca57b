#include "workloads/model_spec.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "workloads/checked_math.hpp"
#include "workloads/limits.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::workloads {
namespace {

void require_not_negative(std::int64_t value, const char* key) {
  if (value < 0) {
    throw SpecError(key,
                    std::string(key) + " must not be negative (got " + std::to_string(value) + ")");
  }
}

// Every size that drives work or memory stays below its bound (workloads::limits).
void require_bounded(const ModelSpec& m) {
  namespace l = limits;
  const std::pair<std::int64_t, std::pair<std::int64_t, const char*>> bounds[] = {
      {m.hidden_size, {l::kHiddenSize, "hidden_size"}},
      {m.intermediate_size, {l::kIntermediateSize, "intermediate_size"}},
      {m.num_hidden_layers, {l::kLayers, "num_hidden_layers"}},
      {m.num_attention_heads, {l::kHeads, "num_attention_heads"}},
      {m.num_key_value_heads, {l::kHeads, "num_key_value_heads"}},
      {m.head_dim, {l::kHeadDim, "head_dim"}},
      {m.vocab_size, {l::kVocabSize, "vocab_size"}},
      {m.output_vocab_size, {l::kVocabSize, "output_vocab_size"}},
      {m.max_position_embeddings, {l::kMaxPositionEmbeddings, "max_position_embeddings"}},
      {m.num_local_experts, {l::kExperts, "num_local_experts"}},
      {m.moe_intermediate_size, {l::kIntermediateSize, "moe_intermediate_size"}},
      {m.n_shared_experts, {l::kSharedExperts, "n_shared_experts"}},
      {m.shared_expert_intermediate_size,
       {l::kIntermediateSize, "shared_expert_intermediate_size"}},
      {m.q_lora_rank, {l::kHeadDim, "q_lora_rank"}},
      {m.kv_lora_rank, {l::kHeadDim, "kv_lora_rank"}},
      {m.qk_nope_head_dim, {l::kHeadDim, "qk_nope_head_dim"}},
      {m.qk_rope_head_dim, {l::kHeadDim, "qk_rope_head_dim"}},
      {m.v_head_dim, {l::kHeadDim, "v_head_dim"}},
      {m.indexer_heads, {l::kHeads, "index_n_heads"}},
      {m.attention_input_size, {l::kHiddenSize, "attention_hidden_size"}},
      {m.indexer_head_dim, {l::kHeadDim, "index_head_dim"}},
      {m.position_offset, {l::kMaxPositionEmbeddings, "max_position_embeddings"}},
      {m.ssm_inner_size, {l::kIntermediateSize, "intermediate_size"}},
      {m.ssm_state_size, {l::kHeadDim, "state_size"}},
      {m.ssm_conv_kernel, {l::kHeadDim, "conv_kernel"}},
      {m.ssm_dt_rank, {l::kHiddenSize, "time_step_rank"}},
      {m.ssm_heads, {l::kHeads, "num_heads"}},
      {m.ssm_groups, {l::kHeads, "n_groups"}},
  };
  for (const auto& [value, bound] : bounds) require_at_most(value, bound.first, bound.second);
}

void validate_moe(const ModelSpec& m) {
  require_not_negative(m.num_local_experts, "num_local_experts");
  require_not_negative(m.num_experts_per_tok, "num_experts_per_tok");
  require_not_negative(m.moe_intermediate_size, "moe_intermediate_size");
  require_not_negative(m.n_shared_experts, "n_shared_experts");
  require_not_negative(m.first_k_dense_replace, "first_k_dense_replace");
  require_not_negative(m.shared_expert_intermediate_size, "shared_expert_intermediate_size");
  if (m.shared_expert_intermediate_size > 0 && m.n_shared_experts > 0) {
    throw SpecError(
        "shared_expert_intermediate_size",
        "set either shared_expert_intermediate_size (one shared expert of that width) or "
        "n_shared_experts (that many of moe_intermediate_size), not both");
  }
  if (m.shared_expert_gate && m.shared_intermediate_size() == 0) {
    throw SpecError(
        "shared_expert_gate",
        "shared_expert_gate needs a shared expert: set shared_expert_intermediate_size or "
        "n_shared_experts");
  }
  if (!m.is_moe()) {
    if (m.n_shared_experts > 0 || m.num_experts_per_tok > 0 || m.moe_router_bias ||
        m.shared_expert_intermediate_size > 0) {
      throw SpecError("num_local_experts",
                      "MoE keys are set but num_local_experts is 0; set num_local_experts to the "
                      "number of routed experts");
    }
    return;
  }
  require_positive(m.num_experts_per_tok, "num_experts_per_tok");
  if (m.num_experts_per_tok > m.num_local_experts) {
    throw SpecError("num_experts_per_tok", "num_experts_per_tok (" +
                                               std::to_string(m.num_experts_per_tok) +
                                               ") exceeds num_local_experts (" +
                                               std::to_string(m.num_local_experts) + ")");
  }
  if (m.moe_layers.empty() && m.first_k_dense_replace >= m.num_hidden_layers) {
    throw SpecError("first_k_dense_replace", "first_k_dense_replace (" +
                                                 std::to_string(m.first_k_dense_replace) +
                                                 ") leaves no MoE layer among " +
                                                 std::to_string(m.num_hidden_layers) + " layers");
  }
}

void validate_mla(const ModelSpec& m) {
  require_not_negative(m.q_lora_rank, "q_lora_rank");
  require_not_negative(m.kv_lora_rank, "kv_lora_rank");
  if (!m.uses_mla()) {
    if (m.q_lora_rank > 0 || m.qk_nope_head_dim > 0 || m.qk_rope_head_dim > 0 || m.v_head_dim > 0 ||
        m.indexer_heads > 0) {
      throw SpecError("kv_lora_rank",
                      "multi-head latent attention keys are set but kv_lora_rank is 0; set "
                      "kv_lora_rank to enable MLA");
    }
    return;
  }
  if (m.qk_norm) {
    throw SpecError("qk_norm",
                    "qk_norm does not apply to multi-head latent attention (it has its own "
                    "kv_a_layernorm / q_a_layernorm)");
  }
  require_positive(m.qk_nope_head_dim, "qk_nope_head_dim");
  require_positive(m.qk_rope_head_dim, "qk_rope_head_dim");
  require_positive(m.v_head_dim, "v_head_dim");
  require_not_negative(m.indexer_heads, "index_n_heads");
  if (m.indexer_heads == 0) return;
  require_positive(m.indexer_head_dim, "index_head_dim");
  // The indexer's queries come from the compressed query (wq_b reads q_lora_rank).
  require_positive(m.q_lora_rank, "q_lora_rank");
}

// A state-space mixer needs its sizes; Mamba-2's heads and groups must tile d_inner.
void validate_ssm(const ModelSpec& m) {
  // Lightning attention is sized by the attention heads alone.
  if (m.mixer == Mixer::attention || m.mixer == Mixer::lightning) return;
  if (m.mixer == Mixer::short_conv) {  // sized by hidden_size alone
    require_positive(m.ssm_conv_kernel, "conv_kernel");
    return;
  }
  require_positive(m.ssm_inner_size, "intermediate_size");
  require_positive(m.ssm_state_size, "state_size");
  require_positive(m.ssm_conv_kernel, "conv_kernel");
  if (m.mixer == Mixer::mamba) {
    require_positive(m.ssm_dt_rank, "time_step_rank");
    if (m.ssm_heads > 0 && m.ssm_inner_size % m.ssm_heads != 0) {
      throw SpecError("num_heads", "the Mamba inner size (" + std::to_string(m.ssm_inner_size) +
                                       ") is not a multiple of its heads (" +
                                       std::to_string(m.ssm_heads) + ")");
    }
    return;
  }
  require_positive(m.ssm_heads, "num_heads");
  require_positive(m.ssm_groups, "n_groups");
  if (m.mixer == Mixer::gated_delta_net) {
    if (m.ssm_inner_size % m.ssm_heads != 0) {
      throw SpecError("num_heads", "the value width (" + std::to_string(m.ssm_inner_size) +
                                       ") is not a multiple of the value heads (" +
                                       std::to_string(m.ssm_heads) + ")");
    }
    return;
  }
  if (m.ssm_heads % m.ssm_groups != 0) {
    throw SpecError("n_groups", "num_heads (" + std::to_string(m.ssm_heads) +
                                    ") is not a multiple of n_groups (" +
                                    std::to_string(m.ssm_groups) + ")");
  }
}

// A list of layer indices: ascending, each below num_hidden_layers.
void validate_layer_list(const ModelSpec& m, const std::vector<std::int64_t>& layers,
                         const char* key) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i] < 0 || layers[i] >= m.num_hidden_layers ||
        (i > 0 && layers[i] <= layers[i - 1])) {
      throw SpecError(key, std::string(key) +
                               " must list ascending layer indices below "
                               "num_hidden_layers (" +
                               std::to_string(m.num_hidden_layers) + "); entry " +
                               std::to_string(i) + " is " + std::to_string(layers[i]));
    }
  }
}

bool lists(const std::vector<std::int64_t>& layers, std::int64_t layer) {
  return std::binary_search(layers.begin(), layers.end(), layer);
}

// Spelled-out kinds: one per layer, each MoE exactly where moe_layers says.
void validate_layer_kinds(const ModelSpec& m) {
  if (m.layer_kinds.empty()) return;
  if (static_cast<std::int64_t>(m.layer_kinds.size()) != m.num_hidden_layers) {
    throw SpecError("num_hidden_layers",
                    "the layer pattern has " + std::to_string(m.layer_kinds.size()) +
                        " layers, num_hidden_layers says " + std::to_string(m.num_hidden_layers));
  }
  for (std::int64_t layer = 0; layer < m.num_hidden_layers; ++layer) {
    if (m.layer_kinds[static_cast<std::size_t>(layer)].moe != m.layer_is_moe(layer)) {
      throw SpecError("moe_layers", "layer " + std::to_string(layer) +
                                        " is MoE in one of the layer pattern and moe_layers only");
    }
  }
}

}  // namespace

bool ModelSpec::layer_is_moe(std::int64_t layer) const {
  if (!is_moe()) return false;
  return moe_layers.empty() ? layer >= first_k_dense_replace : lists(moe_layers, layer);
}

std::int64_t ModelSpec::moe_layer_count() const {
  if (!is_moe()) return 0;
  return moe_layers.empty() ? num_hidden_layers - first_k_dense_replace
                            : static_cast<std::int64_t>(moe_layers.size());
}

LayerKind ModelSpec::layer_kind(std::int64_t layer) const {
  if (!layer_kinds.empty()) return layer_kinds[static_cast<std::size_t>(layer)];
  LayerKind kind;
  kind.moe = layer_is_moe(layer);
  kind.kv_shared = layer >= num_hidden_layers - kv_shared_layers;
  kind.indexer = indexer_heads > 0 && !lists(shared_indexer_layers, layer);
  if (mixer == Mixer::attention) return kind;
  if (!is_hybrid()) return LayerKind{false, true, false, false};
  kind.attention = ssm_beside_attention || lists(attention_layers, layer);
  kind.ssm = ssm_beside_attention || !kind.attention;
  return kind;
}

ModelSpec ModelSpec::resolved() const {
  ModelSpec copy = *this;
  if (copy.num_key_value_heads == 0) copy.num_key_value_heads = copy.num_attention_heads;
  if (copy.head_dim == 0 && copy.num_attention_heads > 0) {
    copy.head_dim = copy.hidden_size / copy.num_attention_heads;  // HF: integer division
  }
  return copy;
}

void ModelSpec::validate() const {
  require_bounded(*this);
  require_positive(hidden_size, "hidden_size");
  require_positive(num_hidden_layers, "num_hidden_layers");
  require_positive(num_attention_heads, "num_attention_heads");
  require_positive(vocab_size, "vocab_size");
  require_not_negative(max_position_embeddings, "max_position_embeddings");
  if (output_vocab_size > vocab_size || (output_vocab_size > 0 && tie_word_embeddings)) {
    throw SpecError("output_vocab_size",
                    "a pruned output layer needs untied embeddings and at most vocab_size (" +
                        std::to_string(vocab_size) + ") rows");
  }
  const bool every_layer_moe = is_moe() && moe_layer_count() == num_hidden_layers;
  if (!every_layer_moe || moe_intermediate_size == 0) {
    require_positive(intermediate_size, "intermediate_size");
  }
  require_not_negative(num_key_value_heads, "num_key_value_heads");
  require_not_negative(head_dim, "head_dim");
  const ModelSpec full = resolved();
  if (!uses_mla()) {
    require_positive(full.head_dim, "head_dim");
    if (full.num_attention_heads % full.num_key_value_heads != 0) {
      throw SpecError("num_key_value_heads", "num_attention_heads (" +
                                                 std::to_string(num_attention_heads) +
                                                 ") is not a multiple of num_key_value_heads (" +
                                                 std::to_string(full.num_key_value_heads) + ")");
    }
  }
  if (position_embedding == PositionEmbedding::learned && max_position_embeddings <= 0) {
    throw SpecError("max_position_embeddings",
                    "position_embedding = \"learned\" needs max_position_embeddings > 0");
  }
  validate_moe(*this);
  validate_mla(*this);
  validate_ssm(*this);
  validate_layer_list(*this, attention_layers, "attention_layers");
  validate_layer_list(*this, moe_layers, "moe_layers");
  validate_layer_list(*this, shared_indexer_layers, "indexer_types");
  validate_layer_kinds(*this);
  if (kv_shared_layers > 0 && kv_shared_layers >= num_hidden_layers) {
    throw SpecError(
        "kv_shared_layers",
        "every layer would reuse another's keys and values: " + std::to_string(kv_shared_layers) +
            " is not below num_hidden_layers (" + std::to_string(num_hidden_layers) + ")");
  }
}

std::string_view norm_name(NormKind kind) {
  switch (kind) {
    case NormKind::rmsnorm:
      return "rmsnorm";
    case NormKind::layernorm:
      return "layernorm";
    case NormKind::none:
      return "none";
  }
  return "rmsnorm";
}

std::string_view norm_placement_name(NormPlacement placement) {
  switch (placement) {
    case NormPlacement::pre:
      return "pre";
    case NormPlacement::parallel:
      return "parallel";
    case NormPlacement::sandwich:
      return "sandwich";
    case NormPlacement::post:
      return "post";
    case NormPlacement::parallel_pair:
      return "parallel_pair";
  }
  return "pre";
}

std::string_view hf_names_name(HfNames names) {
  switch (names) {
    case HfNames::llama:
      return "llama";
    case HfNames::qwen2_moe:
      return "qwen2_moe";
    case HfNames::falcon:
      return "falcon";
    case HfNames::gpt_neox:
      return "gpt_neox";
    case HfNames::phi:
      return "phi";
    case HfNames::starcoder2:
      return "starcoder2";
    case HfNames::cohere:
      return "cohere";
    case HfNames::glm4:
      return "glm4";
    case HfNames::deepseek:
      return "deepseek";
    case HfNames::vaultgemma:
      return "vaultgemma";
    case HfNames::gpt2:
      return "gpt2";
    case HfNames::gptj:
      return "gptj";
    case HfNames::bloom:
      return "bloom";
    case HfNames::opt:
      return "opt";
    case HfNames::gpt_oss:
      return "gpt_oss";
    case HfNames::llama4:
      return "llama4";
    case HfNames::granitemoe:
      return "granitemoe";
    case HfNames::mamba:
      return "mamba";
    case HfNames::dbrx:
      return "dbrx";
    case HfNames::hybrid:
      return "hybrid";
    case HfNames::nemotron_h:
      return "nemotron_h";
    case HfNames::hunyuan:
      return "hunyuan";
    case HfNames::hunyuan_moe:
      return "hunyuan_moe";
    case HfNames::nanochat:
      return "nanochat";
    case HfNames::persimmon:
      return "persimmon";
    case HfNames::gpt_neo:
      return "gpt_neo";
    case HfNames::xglm:
      return "xglm";
    case HfNames::openai_gpt:
      return "openai_gpt";
    case HfNames::exaone:
      return "exaone";
    case HfNames::granitemoe_swa:
      return "granitemoe_swa";
    case HfNames::sarvam_moe:
      return "sarvam_moe";
    case HfNames::exaone_moe:
      return "exaone_moe";
    case HfNames::lfm2:
      return "lfm2";
    case HfNames::hyperclovax:
      return "hyperclovax";
    case HfNames::apertus:
      return "apertus";
    case HfNames::minimax_m2:
      return "minimax_m2";
    case HfNames::ernie4_5_moe:
      return "ernie4_5_moe";
    case HfNames::qwen3_5:
      return "qwen3_5";
    case HfNames::afmoe:
      return "afmoe";
    case HfNames::hy_v3:
      return "hy_v3";
    case HfNames::kolibri1:
      return "kolibri1";
    case HfNames::flint:
      return "flint";
    case HfNames::bert:
      return "bert";
    case HfNames::megatron_bert:
      return "megatron_bert";
    case HfNames::roberta_prelayernorm:
      return "roberta_prelayernorm";
    case HfNames::xlm_roberta_xl:
      return "xlm_roberta_xl";
    case HfNames::roberta:
      return "roberta";
    case HfNames::biogpt:
      return "biogpt";
    case HfNames::ctrl:
      return "ctrl";
    case HfNames::xlm:
      return "xlm";
    case HfNames::zamba:
      return "zamba";
    case HfNames::zamba2:
      return "zamba2";
    case HfNames::aria:
      return "aria_text";
    case HfNames::jetmoe:
      return "jetmoe";
  }
  return "llama";
}

std::string_view qk_norm_shape_name(QkNormShape shape) {
  switch (shape) {
    case QkNormShape::all_heads:
      return "all_heads";
    case QkNormShape::per_head:
      return "per_head";
    case QkNormShape::head_dim:
      return "head_dim";
  }
  return "all_heads";
}

std::string_view mlp_name(MlpKind kind) {
  return kind == MlpKind::gated ? "gated" : "plain";
}

std::string_view position_embedding_name(PositionEmbedding kind) {
  switch (kind) {
    case PositionEmbedding::rope:
      return "rope";
    case PositionEmbedding::learned:
      return "learned";
    case PositionEmbedding::alibi:
      return "alibi";
  }
  return "rope";
}

}  // namespace ckpt::workloads
