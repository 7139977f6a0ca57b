#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ckpt::harness {

// What `project` and `report` are told about a two-level (near tier every k steps, far tier
// every K-th of those) checkpoint scheme. Off unless a tier is named.
struct TierOptions {
  // --near-tier, --far-tier: KEY=VALUE[,KEY=VALUE...] picking one case of the runs (keys as
  // --baseline: `run` or any campaign key), or stall=S,durable=S,restore=S in seconds.
  std::string near, far;
  std::optional<double> step_seconds;      // --step-seconds (else the near case's loop)
  std::optional<double> near_recoverable;  // --near-recoverable P (0..1)
  std::int64_t trials = 1000;              // --mc-trials
  std::uint64_t seed = 1;                  // --mc-seed
  double job_days = 30;                    // --job-days: each trial's length
  std::string failure_trace;  // --failure-trace FILE: failure times, hours ("" exponential)

  bool requested() const { return !near.empty() || !far.empty(); }
};

}  // namespace ckpt::harness
