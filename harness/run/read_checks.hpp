#pragma once

// Private to harness/run: what the restore and load phases share: the opening of a stored
// checkpoint (manifest_path_problem and damaged_checkpoint_problem before any data is read), its
// read plans, and the end of a timed read.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Collective, before planning a restore or load: the case lock, then the newest complete
// checkpoint of `writer` this case can read, into `dir` and `manifest` (SetupError on every
// process when there is none, or its manifest names files outside it), recorded as the case's
// checkpoint and its plans' directory; then its files against `writer`'s plans, its
// checkpoint_hash and a safetensors checkpoint's headers and index: false (the case failed) when
// it is damaged.
bool open_stored_checkpoint(CaseState& s, const Case& writer, std::filesystem::path& dir,
                            Manifest& manifest);

// Collective, after open_stored_checkpoint: this process's plans of reading that checkpoint into
// the case's layout (their shards hold the state of the training iteration the manifest names).
// SetupError on every process when they cannot be planned: a resharding problem after
// `reshard_context`, else a damaged manifest.
ProcessPlans plan_stored_reads(CaseState& s, const Case& writer, const std::filesystem::path& dir,
                               const Manifest& manifest, const std::string& reshard_context);

// "<manifest path>: damaged manifest: <problem> — <what else the case directory holds>".
std::string damaged_manifest(CaseCheckpoints& store, const Case& writer,
                             const std::filesystem::path& dir, const std::string& problem);

// After a timed read (`what`: "restore" or "load") of `plans` into `buffer`: the first error,
// else verification (when `verify`), the iteration's read figures and `timing` kept (timed
// iterations). False when the case failed. Collective.
bool finish_read(CaseState& s, const char* what, const ProcessSample& sample,
                 const IterationTiming& timing, const std::vector<RankPlan>& plans,
                 const ProcessBuffer& buffer, bool verify, std::vector<IterationTiming>* timings);

}  // namespace ckpt::harness
