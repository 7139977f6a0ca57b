#include "harness/models/model_zoo.hpp"

#include <filesystem>

#include "harness/common/config_error.hpp"
#include "harness/models/model_file.hpp"
#include "harness/common/suggest.hpp"

namespace ckpt::harness {

workloads::ModelSpec zoo_model(std::string_view name) {
  std::vector<std::string_view> names;
  for (const ZooEntry& entry : zoo_entries()) {
    if (entry.name == name) return parse_model_toml(entry.toml, "zoo:" + std::string(entry.name));
    names.push_back(entry.name);
  }
  std::string hint = did_you_mean(name, names);
  if (hint.empty()) hint = "; `ckptbench models` lists the zoo";
  throw ConfigError("--model", 0, std::string(name),
                    "no such model in the zoo and no such file" + hint +
                        " (a path must end in .toml or .json, or be a directory with config.json)");
}

workloads::ModelSpec load_model_argument(const std::string& argument) {
  namespace fs = std::filesystem;
  const fs::path path(argument);
  if (path.extension() == ".toml") return load_model_toml(path);
  if (path.extension() == ".json") return load_model_hf_json(path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) return load_model_hf_json(path / "config.json");
  return zoo_model(argument);
}

}  // namespace ckpt::harness
