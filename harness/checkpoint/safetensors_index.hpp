#pragma once

#include <nlohmann/json.hpp>

#include "harness/plan/safetensors_plan.hpp"

namespace ckpt::harness {

// model.safetensors.index.json of the manifest's tensors (manifest_tensors' entries).
nlohmann::json safetensors_index(const nlohmann::json& manifest_tensors, bool weights_only);

}  // namespace ckpt::harness
