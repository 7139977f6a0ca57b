#pragma once

// A node-local tier's mark that its copy of a checkpoint is complete, tiers.json: a typed
// TierManifest with one writer and one reader, the only code that knows the file's JSON. The
// tiered engine writes it once every process's parts and replicas of the checkpoint are whole in
// the node's local tier; a copy without it does not count.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::harness {

inline constexpr const char* kTierManifestName = "tiers.json";

struct TierManifest {
  std::int64_t iteration = 0;  // the training iteration the copy holds
  int node = 0;
  int processes = 0;
  int processes_per_node = 0;
  int replicas = 0;        // F
  int clique_stride = 0;   // J
  std::vector<int> parts;  // the processes whose parts the node holds, ascending
  std::string remote;      // the backend's checkpoint directory when drained, else ""
};

// Writes `mark` as `checkpoint_dir`/tiers.json atomically (temp, fsync, rename). Throws
// std::runtime_error naming the path.
void write_tier_manifest(const std::filesystem::path& checkpoint_dir, const TierManifest& mark);

// The mark of the copy in `checkpoint_dir`; nullopt when it has none (the copy is not complete).
// Throws ConfigError naming the file and the key when it is damaged (not JSON, a field missing,
// mistyped or out of bounds, a part outside the processes).
std::optional<TierManifest> read_tier_manifest(const std::filesystem::path& checkpoint_dir);

}  // namespace ckpt::harness
