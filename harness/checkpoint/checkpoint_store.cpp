// What is written once over every CheckpointStore: the search for the restorable checkpoint, the
// advice after damage, the `latest` pointers; and the choice of store for a case.
#include "harness/checkpoint/checkpoint_store.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "backends/registry.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/checkpoint/object_checkpoint_store.hpp"
#include "harness/checkpoint/target_check.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

bool stores_objects(const Case& c) {
  for (const backends::BackendInfo& info : backends::list_backends()) {
    if (info.name == c.backend) return info.capabilities.object_store;
  }
  return false;
}

std::unique_ptr<CheckpointStore> make_checkpoint_store(const Case& c, int process) {
  if (!stores_objects(c)) return std::make_unique<FileCheckpointStore>();
  std::unique_ptr<backends::Backend> backend;
  // One connection of process 0's own: the store's requests stay apart from the data's, and the
  // other processes never list, read or write the store.
  if (process == 0) backend = backends::make_backend(c.backend, c.io, c.backend_options);
  return std::make_unique<ObjectCheckpointStore>(std::move(backend));
}

std::optional<std::string> find_restorable_checkpoint(CheckpointStore& store, const Case& c,
                                                      fs::path& dir, Manifest& manifest) {
  if (auto problem = store.find_latest(c, dir)) return problem;
  try {
    manifest = store.read_manifest(dir);
  } catch (const std::exception& e) {
    return fmt::format("{} — {}", e.what(), damaged_checkpoint_advice(store, c, dir));
  }
  const std::string hash =
      manifest_hash(checkpoint_hash(c), manifest.training_iteration, manifest.tensors);
  if (manifest.checkpoint_hash == hash) return std::nullopt;
  const std::string difference = checkpoint_difference(manifest.config, c);
  if (!difference.empty()) {
    return fmt::format(
        "checkpoint at {} was written with {}; restore with the keys it was written with (its "
        "manifest's `config` lists them)",
        dir.string(), difference);
  }
  // The same configuration: the tensor list, the training iteration or the hash changed after the
  // write. The read path's checks (damaged_checkpoint_problem) name which, and the tensor.
  return std::nullopt;
}

std::optional<std::string> find_restorable_checkpoint(const Case& c, fs::path& dir,
                                                      Manifest& manifest) {
  FileCheckpointStore files;
  return find_restorable_checkpoint(files, c, dir, manifest);
}

std::string damaged_checkpoint_advice(CheckpointStore& store, const Case& c, const fs::path& dir) {
  const fs::path case_dir = case_directory(c);
  std::vector<std::string> complete;
  for (std::string& name : store.complete_checkpoints(c)) {
    if (case_dir / name != dir) complete.push_back(std::move(name));
  }
  if (complete.empty()) {
    return fmt::format(
        "ckptbench does not fall back to another checkpoint, and {} holds no other complete one: "
        "write a new one with --phase checkpoint (campaign.overwrite = true replaces this one)",
        case_dir.string());
  }
  std::sort(complete.rbegin(), complete.rend());
  std::string names = complete.front();
  for (std::size_t i = 1; i < complete.size(); ++i) names += ", " + complete[i];
  return fmt::format(
      "ckptbench does not fall back to another checkpoint on its own; other complete checkpoints "
      "in {}: "
      "{} — to restore one, write its name into {}",
      case_dir.string(), names, (case_dir / "latest").string());
}

std::string damaged_checkpoint_advice(const Case& c, const fs::path& dir) {
  FileCheckpointStore files;
  return damaged_checkpoint_advice(files, c, dir);
}

void record_latest_checkpoint(CheckpointStore& store, const Case& c, const fs::path& dir,
                              std::int64_t step) {
  // `latest` holds the directory name, as DeepSpeed's does; Megatron keeps the number apart.
  const bool deepspeed = c.directory_layout == DirectoryLayout::deepspeed;
  store.write_text(case_directory(c) / "latest", dir.filename().string() + (deepspeed ? "" : "\n"));
  if (c.directory_layout == DirectoryLayout::megatron ||
      c.directory_layout == DirectoryLayout::megatron_dist) {
    store.write_text(case_directory(c) / "latest_checkpointed_iteration.txt",
                     std::to_string(step) + "\n");
  }
}

void record_latest_checkpoint(const Case& c, const fs::path& dir, std::int64_t step) {
  FileCheckpointStore files;
  record_latest_checkpoint(files, c, dir, step);
}

}  // namespace ckpt::harness
