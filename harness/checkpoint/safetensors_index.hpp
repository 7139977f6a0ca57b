#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {

// model.safetensors.index.json of the manifest's tensors.
nlohmann::json safetensors_index(const std::vector<ManifestTensor>& tensors, bool weights_only);
// The index file's text, formatted as save_pretrained writes it.
std::string safetensors_index_text(const nlohmann::json& index);
// Whether the checkpoint has an index: save_pretrained writes one only beside several files;
// ckptbench's per-rank files of full state always have one.
bool writes_safetensors_index(const std::vector<ManifestTensor>& tensors, bool weights_only);

}  // namespace ckpt::harness
