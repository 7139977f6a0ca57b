#pragma once

#include <string_view>

#include "harness/models/hf_config.hpp"
#include "workloads/model_spec.hpp"

namespace ckpt::harness::hf {

// Each the whole ModelSpec from the family's config.json, with its config class's defaults.
workloads::ModelSpec map_gemma3n(const HfConfig& config);
workloads::ModelSpec map_doge(const HfConfig& config);
workloads::ModelSpec map_trocr(const HfConfig& config);
workloads::ModelSpec map_jetmoe(const HfConfig& config);
// What RoFormer, RoCBert and X-MOD add to BERT's layout (`spec`, mapped): RoFormer's stored
// sinusoidal position table in place of learned positions, RoCBert's pronunciation and shape
// embeddings, X-MOD's language adapters.
void add_bert_extras(workloads::ModelSpec& spec, const HfConfig& config,
                     std::string_view model_type);

}  // namespace ckpt::harness::hf
