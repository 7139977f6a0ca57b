#include "harness/checkpoint/safetensors_index.hpp"

#include <cstdint>
#include <string>

#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {

nlohmann::json safetensors_index(const nlohmann::json& manifest_tensors, bool weights_only) {
  nlohmann::json weight_map = nlohmann::json::object();
  std::uint64_t total = 0;
  for (const nlohmann::json& t : manifest_tensors) {
    weight_map[safetensors_name(shard_from_json(t), weights_only)] =
        t.at("file").get<std::string>();
    total += t.at("bytes").get<std::uint64_t>();
  }
  return {{"metadata", {{"total_size", total}}}, {"weight_map", std::move(weight_map)}};
}

}  // namespace ckpt::harness
