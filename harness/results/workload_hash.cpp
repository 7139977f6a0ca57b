#include "harness/results/workload_hash.hpp"

#include <initializer_list>
#include <nlohmann/json.hpp>

#include "harness/memory/checksum.hpp"

namespace ckpt::harness {
namespace {

// `keys` of table `table` of the case's config, null where absent.
nlohmann::json picked(const nlohmann::json& config, const char* table,
                      std::initializer_list<const char*> keys) {
  const nlohmann::json values = config.value(table, nlohmann::json::object());
  nlohmann::json out = nlohmann::json::object();
  for (const char* key : keys) out[key] = values.value(key, nlohmann::json());
  return out;
}

}  // namespace

std::string workload_hash(const Case& c) {
  const nlohmann::json& config = c.config;
  const nlohmann::json workload{
      {"model",
       {{"name", c.model.name},
        {"scale", c.scale},
        {"sizing", workloads::sizing_name(c.state.sizing)}}},
      {"parallel", config.value("parallel", nlohmann::json::object())},
      {"state", config.value("state", nlohmann::json::object())},
      {"ranks", config.value("ranks", nlohmann::json::object())},
      {"strategy", picked(config, "strategy",
                          {"mapping", "layout", "megatron_optimizer", "writer_threads", "alignment",
                           "format", "max_shard_bytes"})},
      {"data", picked(config, "data", {"pattern", "seed"})}};
  return checksum_hex(checksum64(workload.dump()));
}

}  // namespace ckpt::harness
