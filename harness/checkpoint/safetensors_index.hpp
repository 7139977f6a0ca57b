#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {

// model.safetensors.index.json of the manifest's tensors.
nlohmann::json safetensors_index(const std::vector<ManifestTensor>& tensors, bool weights_only);

}  // namespace ckpt::harness
