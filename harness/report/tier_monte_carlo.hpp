#pragma once

// The two-level scheme of tier_point played out over failure times drawn at random: a
// distribution of goodput where the analytic model gives its first-order mean.
#include <cstdint>
#include <vector>

#include "harness/report/tier_model.hpp"

namespace ckpt::harness {

struct MonteCarloSetup {
  std::int64_t trials = 1000;
  std::uint64_t seed = 1;
  double job_seconds = 30 * 86400.0;  // each trial's wall-clock length
  // Failure times in seconds from the job's start, each below job_seconds; each trial shifts
  // them by a random offset, wrapping around the job's end. Empty: failures arrive with
  // exponential gaps of mean in.mtbf_seconds.
  std::vector<double> trace;
};

struct MonteCarloGoodput {
  std::int64_t trials = 0;
  double mean = 0, p5 = 0, p50 = 0, p95 = 0;  // goodput over the trials, nearest rank
  double failures = 0;                        // per trial, mean
  double near_recoveries = 0;                 // per trial, mean: restored from the near tier
};

struct TrialFailure {
  double at = 0;               // seconds from the job's start, ascending
  bool near_survives = false;  // the near tier's copies outlive it
};
struct TrialOutcome {
  double goodput = 0;
  std::int64_t near_recoveries = 0;
};

// One trial: the job from step 0 for job_seconds: compute k s, a checkpoint (stall C3 on every
// K-th by step number, else C1), and so on; a copy becomes usable its time to durable after the
// checkpoint starts and dies with a failure before then. At a failure the near tier's survival
// decides: the job restarts from the newest usable near copy (R1), else from the newest usable
// far copy (R3; an emptied near tier stays empty until the next near copy is usable), from step
// 0 without either (no restore). A failure during a recovery starts it again. Goodput = the
// compute done by the end (k s per checkpoint kept, plus the running step) / job_seconds.
TrialOutcome play_trial(const TierInputs& in, std::int64_t k, std::int64_t far_every,
                        const std::vector<TrialFailure>& failures, double job_seconds);

// play_trial over `trials` trials, each with its failure times (exponential gaps or the shifted
// trace) and for each failure a draw below p for the near tier's survival. Deterministic for a
// seed: std::mt19937_64, uniforms from its top 53 bits, gaps -M log(1 - u).
MonteCarloGoodput monte_carlo_goodput(const TierInputs& in, std::int64_t k, std::int64_t far_every,
                                      const MonteCarloSetup& setup);

// The nearest-rank percentile of sorted values: the ceil(q n)-th smallest (the first for q = 0).
double nearest_rank(const std::vector<double>& sorted, double q);

}  // namespace ckpt::harness
