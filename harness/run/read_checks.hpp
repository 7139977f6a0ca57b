#pragma once

// Private to harness/run: what the restore and load phases share: the checks of a stored
// checkpoint before it is read (harness/checkpoint/manifest_checks.hpp) and the end of a timed
// read.
#include <filesystem>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Before planning: what makes the checkpoint `writer` wrote in `dir` unreadable (a manifest
// naming files outside it), or "" (collective use through agree).
std::string unreadable_checkpoint(const Case& writer, const std::filesystem::path& dir,
                                  const Manifest& manifest);

// Collective, after planning and before any data is read: damage of that checkpoint fails the
// case (false).
bool written_as_planned(CaseState& s, const Case& writer, const std::filesystem::path& dir,
                        const Manifest& manifest);

// After a timed read (`what`: "restore" or "load") of `plans` into `buffer`: the first error,
// else verification (when `verify`), the iteration's read figures and `timing` kept (timed
// iterations). False when the case failed. Collective.
bool finish_read(CaseState& s, const char* what, const ProcessSample& sample,
                 const IterationTiming& timing, const std::vector<RankPlan>& plans,
                 const ProcessBuffer& buffer, bool verify, std::vector<IterationTiming>* timings);

}  // namespace ckpt::harness
