#include "harness/checkpoint/safetensors_index.hpp"

#include <cstdint>
#include <set>
#include <string_view>

#include "harness/plan/safetensors_plan.hpp"
#include "workloads/dtype.hpp"

namespace ckpt::harness {

nlohmann::json safetensors_index(const std::vector<ManifestTensor>& tensors, bool weights_only) {
  nlohmann::json weight_map = nlohmann::json::object();
  std::uint64_t total = 0;
  std::uint64_t elements = 0;
  for (const ManifestTensor& t : tensors) {
    weight_map[safetensors_name(t.shard, weights_only)] = t.file;
    total += t.bytes;
    elements += t.bytes / static_cast<std::uint64_t>(workloads::dtype_bytes(t.shard.dtype));
  }
  nlohmann::json metadata{{"total_size", total}};
  // save_pretrained also records the model's parameters (its num_parameters(): the elements of
  // the tensors it saves but for persistent buffers such as a router's correction bias).
  if (weights_only) metadata["total_parameters"] = elements;
  return {{"metadata", std::move(metadata)}, {"weight_map", std::move(weight_map)}};
}

std::string safetensors_index_text(const nlohmann::json& index) {
  // json.dumps(index, indent=2, sort_keys=True) + "\n", as save_pretrained writes it.
  return index.dump(2) + "\n";
}

bool writes_safetensors_index(const std::vector<ManifestTensor>& tensors, bool weights_only) {
  if (!weights_only) return true;
  std::set<std::string_view> files;
  for (const ManifestTensor& t : tensors) files.insert(t.file);
  return files.size() > 1;
}

}  // namespace ckpt::harness
