#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "workloads/model_spec.hpp"

namespace ckpt::harness {

// Reads a model description: our TOML format (one file per model, HF key names plus ours,
// unknown keys rejected with file, line and the closest known key) or a Hugging Face
// config.json (HF defaults for missing keys). Both validate the result; every error is a
// ConfigError naming the file, the key and, where known, the line.
workloads::ModelSpec load_model_toml(const std::filesystem::path& path);
workloads::ModelSpec parse_model_toml(std::string_view text, const std::string& source_name);
workloads::ModelSpec load_model_hf_json(const std::filesystem::path& path);
workloads::ModelSpec parse_model_hf_json(std::string_view text, const std::string& source_name);

}  // namespace ckpt::harness
