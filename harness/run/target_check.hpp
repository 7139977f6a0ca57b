#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "harness/campaign/case.hpp"

namespace ckpt::harness {

// The directory a case's checkpoints go to: <target>/<campaign>/case-<index>.
std::filesystem::path case_directory(const Case& c);

// Prepares the target for writing (process 0 only): the target must exist (or be created when
// campaign.create_target), be a writable directory, and hold no older checkpoint of this case
// unless campaign.overwrite (then the old one is removed). Returns the problem, or nullopt.
std::optional<std::string> prepare_target_for_checkpoint(const Case& c);

// The newest complete checkpoint of a case (named by its `latest` file), or the problem.
std::optional<std::string> find_latest_checkpoint(const Case& c, std::filesystem::path& dir);

// Records `dir` (checkpoint number `step`) as the case's newest complete checkpoint: atomic
// writes of case-dir/latest and, for the megatron layout, latest_checkpointed_iteration.txt.
void record_latest_checkpoint(const Case& c, const std::filesystem::path& dir, std::int64_t step);

}  // namespace ckpt::harness
