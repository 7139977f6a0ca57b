#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/model_spec.hpp"

namespace ckpt::harness {

// One model of the zoo: its name (the file name without .toml) and its TOML text, embedded
// into the binary at build time from workloads/zoo/.
struct ZooEntry {
  std::string_view name;
  std::string_view toml;
};

std::span<const ZooEntry> zoo_entries();  // sorted by name (generated)

// The zoo model `name`; throws ConfigError suggesting the closest name when unknown.
workloads::ModelSpec zoo_model(std::string_view name);

// Resolves a --model argument: a zoo name, a model TOML file (*.toml), or a Hugging Face
// config (*.json, or a directory holding config.json).
workloads::ModelSpec load_model_argument(const std::string& argument);

}  // namespace ckpt::harness
