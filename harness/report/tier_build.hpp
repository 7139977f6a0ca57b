#pragma once

// Making the projection's two-level part from the options and the runs.
#include <string>
#include <vector>

#include "harness/report/projection.hpp"

namespace ckpt::harness {

// Failure times of a --failure-trace file: one per line in hours from the job's start (blank
// lines and `#` comments skipped), each below job_days. Throws std::runtime_error naming the
// file and line for anything else, and for a file without any.
std::vector<double> read_failure_trace(const std::string& path, double job_days);

// A tier's spec: the matching case of `runs` (exactly one) projected to full scale (the near
// tier without the --storage-gib-per-s bound: node-local), or the numbers. `flag` names the
// option in the messages.
TierSource resolve_tier(const std::string& flag, const std::string& spec,
                        const std::vector<RunRecord>& runs, const ProjectionOptions& options,
                        bool near);

// Throws std::runtime_error with the fix for a missing tier, nonsense numbers (NaN, negative,
// a time to durable below the stall, p outside 0..1), no step time, or a Monte Carlo too large
// to run. M: options.mtbf_hours (--mtbf-hours, or set from the trace by build_projection), else
// the preset scaled to the tier cases' GPUs. `trace_seconds`: the trace's failure times (or none).
TierProjection build_tier_projection(const std::vector<RunRecord>& runs,
                                     const ProjectionOptions& options,
                                     std::vector<double> trace_seconds);

}  // namespace ckpt::harness
