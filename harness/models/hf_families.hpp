#pragma once

#include <string_view>

#include "harness/models/hf_config.hpp"
#include "workloads/model_spec.hpp"

namespace ckpt::harness::hf {

// The families whose config.json spells the common sizes its own way (GPT-2 and GPT-J's n_embd,
// BLOOM's n_layer, OPT's ffn_dim) or has no attention (Mamba): the whole ModelSpec from the
// config, with the defaults of the transformers config class. `model_type` is the row's.
workloads::ModelSpec map_own_keys_family(std::string_view model_type, const HfConfig& config);
// BERT's encoder layer used as a causal LM (BERT, RoBERTa and their followers).
bool is_bert_family(std::string_view model_type);
// The config.json key a ModelSpec key comes from in those families, for pointing an error at it.
std::string own_keys_family_key(std::string_view model_type, const std::string& spec_key);

// The MoE families that store each layer's experts fused in 3-D tensors (gpt-oss, Llama 4,
// GraniteMoE), on top of the common keys already in `spec`.
// DeepSeek-V2/V3 and the families that share their MoE or their latent attention (GLM-4-MoE,
// Solar Open, MiniCPM3), on top of the common keys already in `spec`.
void map_deepseek(workloads::ModelSpec& spec, const HfConfig& config, std::string_view model_type);
// The key of the routed-expert count in those families (n_routed_experts, num_experts, ...).
std::string_view deepseek_experts_key(std::string_view model_type);

void map_fused_moe(workloads::ModelSpec& spec, const HfConfig& config, std::string_view model_type);

}  // namespace ckpt::harness::hf
