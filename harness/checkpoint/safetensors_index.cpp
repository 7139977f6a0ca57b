#include "harness/checkpoint/safetensors_index.hpp"

#include <cstdint>

#include "harness/plan/safetensors_plan.hpp"

namespace ckpt::harness {

nlohmann::json safetensors_index(const std::vector<ManifestTensor>& tensors, bool weights_only) {
  nlohmann::json weight_map = nlohmann::json::object();
  std::uint64_t total = 0;
  for (const ManifestTensor& t : tensors) {
    weight_map[safetensors_name(t.shard, weights_only)] = t.file;
    total += t.bytes;
  }
  return {{"metadata", {{"total_size", total}}}, {"weight_map", std::move(weight_map)}};
}

}  // namespace ckpt::harness
