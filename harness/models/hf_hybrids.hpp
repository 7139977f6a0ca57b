#pragma once

#include <string_view>

#include "harness/models/hf_config.hpp"
#include "workloads/model_spec.hpp"

namespace ckpt::harness::hf {

// The families whose layers mix attention with a state-space or linear-attention mixer (Jamba,
// Bamba, Falcon-H1, GraniteMoeHybrid, NemotronH, Qwen3-Next): the whole ModelSpec from the
// config, with the defaults of the transformers config class.
bool is_hybrid_family(std::string_view model_type);
workloads::ModelSpec map_hybrid_family(std::string_view model_type, const HfConfig& config);

}  // namespace ckpt::harness::hf
