#pragma once

// What every read path (restore, resharding restore, --phase load, `ckptbench load`) checks of a
// checkpoint's manifest before it trusts the data the manifest describes: that this version can
// check it, that its files stay inside the checkpoint, that its tensor list is the one written
// (against the case's plan, or against its checkpoint_hash, which covers the configuration, the
// training iteration and the tensor list).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// A checkpoint whose files or manifest differ from what was written: damaged data (exit 1, as a
// failed verification), unlike a checkpoint this ckptbench cannot read at all (exit 2).
class DamagedCheckpoint : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The manifest's checkpoint_hash: XXH3_64 of the checkpoint's identity digest (checkpoint_hash of
// its configuration), its training iteration and its tensor list as the manifest holds it, so
// that an entry removed, added or edited after the write, or another iteration, no longer matches.
std::string manifest_hash(std::string_view identity_hash,
                          std::optional<std::int64_t> training_iteration,
                          const std::vector<ManifestTensor>& tensors);

// The first file a manifest names (a tensors entry's `file`, a files entry's `path`) that is not
// a relative path inside `dir` (absolute, with "..", empty, or resolving out of `dir` through a
// symbolic link), as "tensor NAME names file \"F\", which is not a file inside DIR"; or nullopt.
std::optional<std::string> manifest_path_problem(const Manifest& manifest,
                                                 const std::filesystem::path& dir);

// Damage the manifest at `path` shows by itself, or nullopt: an empty tensor list, recorded
// scale, data.seed or data.pattern that differ from its configuration's, or a checkpoint_hash
// that does not match its configuration, training iteration and tensor list.
std::optional<std::string> manifest_hash_problem(const Manifest& manifest,
                                                 const std::filesystem::path& path);

// The manifest's tensor list against `planned`, the plans of the writer's ranks as the case
// writes them: the first entry of those ranks that is missing, extra, listed twice or differs
// in a field, named with its field and both values; or nullopt. With `selected` (the ranks the
// case writes, all of them), also any entry of a rank outside it.
std::optional<std::string> tensor_list_problem(const Manifest& manifest,
                                               const std::vector<RankPlan>& planned,
                                               const std::filesystem::path& path,
                                               const std::vector<std::int64_t>* selected = nullptr);

// Every check of a read path after planning, first problem first: the manifest's entries of the
// writer's ranks this process checks against `planned` (their plans as the case writes them;
// with `selected`, the whole selection's, also entries outside it), then manifest_hash_problem
// (process 0), then the files of a safetensors checkpoint in `store` (process `process` of
// `processes` checks its share, process 0 the index; in an object store process 0 checks them
// all, the others holding no connection of it). Each problem names the file, the field and what
// differs.
std::optional<std::string> damaged_checkpoint_problem(const Manifest& manifest,
                                                      const std::filesystem::path& dir,
                                                      const std::vector<RankPlan>& planned,
                                                      const std::vector<std::int64_t>* selected,
                                                      int process, int processes,
                                                      CheckpointStore& store);

}  // namespace ckpt::harness
