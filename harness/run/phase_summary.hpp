#pragma once

// Private to harness/run: a case's timed iterations of one direction summarised for its result.
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/exec/iteration.hpp"
#include "harness/results/case_result.hpp"
#include "harness/run/case_recorder.hpp"

namespace ckpt::harness {

// The restore's (or load's) summary of `timings`, each moving `bytes`; nullopt when none.
std::optional<PhaseSummary> summarize_reads(const std::vector<IterationTiming>& timings,
                                            std::uint64_t bytes);

// The checkpoint's: the same, plus the parts timed beside the transfer (`side`); `dcp_metadata`:
// the checkpoint has coordinator files, whose commit is a straggler phase of its own.
std::optional<PhaseSummary> summarize_writes(const std::vector<IterationTiming>& timings,
                                             std::uint64_t bytes, const SideSeconds& side,
                                             bool dcp_metadata);

}  // namespace ckpt::harness
