#include "harness/report/tier_monte_carlo.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace ckpt::harness {
namespace {

// The checkpoints after a (re)start at wall time t0 from global checkpoint index `base` (step
// base k): checkpoint i >= 1 is global index base + i, its stall ends at end(i).
class Schedule {
 public:
  Schedule(const TierInputs& in, double tau, std::int64_t far_every, double t0, std::int64_t base)
      : in_(in), tau_(tau), far_every_(far_every), t0_(t0), base_(base) {}

  double stall(std::int64_t index) const {
    return index % far_every_ == 0 ? in_.far.stall : in_.near.stall;
  }
  double end(std::int64_t i) const {
    const std::int64_t far_ones = (base_ + i) / far_every_ - base_ / far_every_;
    const auto n = static_cast<double>(i);
    return t0_ + n * (tau_ + in_.near.stall) +
           static_cast<double>(far_ones) * (in_.far.stall - in_.near.stall);
  }
  double near_usable(std::int64_t i) const {
    return end(i) + std::max(in_.near.durable - stall(base_ + i), 0.0);
  }
  double far_usable(std::int64_t i) const {
    return end(i) + std::max(in_.far.durable - in_.far.stall, 0.0);
  }
  // The largest i >= 1 with at(i) <= t for an increasing `at` (0 when none): at(i) >= t0 + i tau.
  template <typename At>
  std::int64_t last_by(double t, At at) const {
    if (t < t0_) return 0;
    std::int64_t lo = 0, hi = static_cast<std::int64_t>((t - t0_) / tau_) + 1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (at(mid) <= t) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  }
  // The newest far copy usable at t (global index), or `fallback`.
  std::int64_t newest_far(double t, std::int64_t fallback) const {
    const std::int64_t i = last_by(t, [&](std::int64_t j) { return far_usable(j); });
    const std::int64_t far_i = i - (base_ + i) % far_every_;
    return far_i >= 1 ? base_ + far_i : fallback;
  }
  // Steps' worth of compute done by t (seconds of progress).
  double progress(double t) const {
    const std::int64_t i = last_by(t, [&](std::int64_t j) { return end(j); });
    const double partial = std::clamp(t - end(i), 0.0, tau_);
    return static_cast<double>(base_ + i) * tau_ + partial;
  }

 private:
  const TierInputs& in_;
  double tau_;
  std::int64_t far_every_;
  double t0_;
  std::int64_t base_;
};

class Uniform {
 public:
  explicit Uniform(std::uint64_t seed) : engine_(seed) {}
  double operator()() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

 private:
  std::mt19937_64 engine_;
};

// One trial's failure times, ascending, all below the job's end.
std::vector<double> failure_times(const TierInputs& in, const MonteCarloSetup& setup,
                                  Uniform& uniform) {
  std::vector<double> times;
  if (setup.trace.empty()) {
    for (double t = -in.mtbf_seconds * std::log1p(-uniform()); t < setup.job_seconds;
         t += -in.mtbf_seconds * std::log1p(-uniform()))
      times.push_back(t);
    return times;
  }
  const double offset = uniform() * setup.job_seconds;
  for (double t : setup.trace) times.push_back(std::fmod(t + offset, setup.job_seconds));
  std::sort(times.begin(), times.end());
  return times;
}

}  // namespace

TrialOutcome play_trial(const TierInputs& in, std::int64_t k, std::int64_t far_every,
                        const std::vector<TrialFailure>& failures, double job_seconds) {
  const double tau = static_cast<double>(k) * in.step_seconds;
  double t0 = 0;
  std::int64_t base = 0, far_base = 0;  // index 0: the job's start, nothing to restore
  bool near_holds_base = true;
  TrialOutcome trial;
  for (const TrialFailure& failure : failures) {
    const double f = failure.at;
    const Schedule s(in, tau, far_every, t0, base);
    const std::int64_t near_i = s.last_by(f, [&](std::int64_t j) { return s.near_usable(j); });
    const std::int64_t far_index = s.newest_far(f, far_base);
    if (failure.near_survives && (near_i >= 1 || near_holds_base)) {
      base += near_i;
      near_holds_base = true;
      ++trial.near_recoveries;
    } else {
      base = far_index;
      near_holds_base = false;
    }
    far_base = std::min(far_index, base);
    const double restore = base == 0 ? 0 : near_holds_base ? in.near.restore : in.far.restore;
    t0 = f + restore;
  }
  trial.goodput = Schedule(in, tau, far_every, t0, base).progress(job_seconds) / job_seconds;
  return trial;
}

double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

MonteCarloGoodput monte_carlo_goodput(const TierInputs& in, std::int64_t k, std::int64_t far_every,
                                      const MonteCarloSetup& setup) {
  Uniform uniform(setup.seed);
  std::vector<double> goodput;
  MonteCarloGoodput r;
  r.trials = setup.trials;
  std::vector<TrialFailure> failures;
  for (std::int64_t t = 0; t < setup.trials; ++t) {
    failures.clear();
    for (double at : failure_times(in, setup, uniform))
      failures.push_back({at, uniform() < in.near_recoverable});
    const TrialOutcome trial = play_trial(in, k, far_every, failures, setup.job_seconds);
    goodput.push_back(trial.goodput);
    r.mean += trial.goodput;
    r.failures += static_cast<double>(failures.size());
    r.near_recoveries += static_cast<double>(trial.near_recoveries);
  }
  const auto n = static_cast<double>(std::max<std::int64_t>(setup.trials, 1));
  r.mean /= n, r.failures /= n, r.near_recoveries /= n;
  std::sort(goodput.begin(), goodput.end());
  r.p5 = nearest_rank(goodput, 0.05);
  r.p50 = nearest_rank(goodput, 0.5);
  r.p95 = nearest_rank(goodput, 0.95);
  return r;
}

}  // namespace ckpt::harness
