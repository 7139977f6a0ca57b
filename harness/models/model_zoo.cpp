#include "harness/models/model_zoo.hpp"

#include <algorithm>
#include <filesystem>

#include "harness/common/config_error.hpp"
#include "harness/common/suggest.hpp"
#include "harness/models/model_file.hpp"

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
  // A file that is there but has another ending is not a zoo name gone wrong: say what it is.
  const auto zoo = zoo_entries();
  const bool zoo_name =
      std::any_of(zoo.begin(), zoo.end(), [&](const ZooEntry& e) { return e.name == argument; });
  if (!zoo_name && fs::exists(path, ec)) {
    const std::string ending =
        path.extension().empty() ? "no extension" : "extension " + path.extension().string();
    throw ConfigError(
        "--model", 0, argument,
        "the file exists but has " + ending +
            ": a model file must end in .toml (ckptbench model file) or .json (Hugging Face "
            "config.json), or be a directory with config.json; rename it, e.g. to " +
            path.stem().string() + ".toml");
  }
  return zoo_model(argument);
}

}  // namespace ckpt::harness
