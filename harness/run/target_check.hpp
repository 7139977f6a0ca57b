#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/campaign/case.hpp"

namespace ckpt::harness {

// The directory a case's checkpoints go to: <target>/<campaign>/case-<index>.
std::filesystem::path case_directory(const Case& c);

// Where making directory `dir` would fail: `dir` itself, or its nearest existing ancestor, when
// that is not a writable directory; nullopt when `dir` is a writable directory or can be made.
std::optional<std::filesystem::path> uncreatable_directory(const std::filesystem::path& dir);

// Why a case cannot write its checkpoints under campaign.target (missing without
// campaign.create_target, not a writable directory, an older checkpoint of this case there
// without campaign.overwrite), or nullopt. Changes nothing.
std::optional<std::string> target_problem(const Case& c);

// Prepares the target for writing (process 0 only): the target must exist (or be created when
// campaign.create_target), be a writable directory, and hold no older checkpoint of this case
// unless campaign.overwrite (then the old one is removed). Returns the problem, or nullopt.
std::optional<std::string> prepare_target_for_checkpoint(const Case& c);

// The newest complete checkpoint of a case (named by its `latest` file), or the problem.
std::optional<std::string> find_latest_checkpoint(const Case& c, std::filesystem::path& dir);

// The newest complete checkpoint of a case and its manifest, when case `c` can restore it (same
// checkpoint_hash); else the problem, naming the keys that differ and both values.
std::optional<std::string> find_restorable_checkpoint(const Case& c, std::filesystem::path& dir,
                                                      nlohmann::json& manifest);

// Records `dir` (checkpoint number `step`) as the case's newest complete checkpoint: atomic
// writes of case-dir/latest and, for the megatron layout, latest_checkpointed_iteration.txt.
void record_latest_checkpoint(const Case& c, const std::filesystem::path& dir, std::int64_t step);

}  // namespace ckpt::harness
