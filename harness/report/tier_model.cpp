#include "harness/report/tier_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ckpt::harness {
namespace {

// The largest k searched: a near interval of 4 M loses more than it runs.
std::int64_t default_max_k(const TierInputs& in) {
  constexpr double kMostSteps = 1e13;  // keeps k s exact in a double
  return static_cast<std::int64_t>(
      std::min(std::ceil(4 * in.mtbf_seconds / in.step_seconds), kMostSteps));
}

// (1 - F/M) / (1 + O) without the floor at 0: the search needs the slope where it is negative.
double raw_goodput(const TierInputs& in, double k, std::int64_t far_every) {
  const TierPoint p = tier_point(in, k, far_every);
  return (1 - p.loss / in.mtbf_seconds) / (1 + p.overhead);
}

// Best whole k in [lo, hi] for one K: ternary search over a unimodal goodput.
std::int64_t best_k(const TierInputs& in, std::int64_t far_every, std::int64_t lo,
                    std::int64_t hi) {
  const auto g = [&](std::int64_t k) { return raw_goodput(in, static_cast<double>(k), far_every); };
  while (hi - lo > 2) {
    const std::int64_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
    if (g(m1) < g(m2)) {
      lo = m1 + 1;
    } else {
      hi = m2;  // ties keep the smaller k inside
    }
  }
  std::int64_t best = lo;
  for (std::int64_t k = lo + 1; k <= hi; ++k) {
    if (g(k) > g(best)) best = k;
  }
  return best;
}

}  // namespace

TierPoint tier_point(const TierInputs& in, double k, std::int64_t far_every) {
  const double tau = k * in.step_seconds, kk = static_cast<double>(far_every);
  const double c1 = in.near.stall, c3 = in.far.stall;
  const double a = tau + c1, b = tau + c3;
  const double lag_a = std::max(in.near.durable - c1, 0.0);
  const double lag_b = std::max(in.near.durable - c3, 0.0);
  const double lag_far = std::max(in.far.durable - c3, 0.0);
  const double cycle = (kk - 1) * a + b;
  TierPoint p;
  p.feasible = tau >= in.near.durable && kk * tau >= in.far.durable;
  p.overhead = ((kk - 1) * c1 + c3) / (kk * tau);
  const double near_lost =
      (((kk - 1) * a * a + b * b) / 2 + (kk - 1) * lag_a * a + lag_b * b) / cycle;
  const double far_lost = cycle / 2 + lag_far;
  const double q = in.near_recoverable;
  p.loss = q * (near_lost + in.near.restore) + (1 - q) * (far_lost + in.far.restore);
  p.goodput = std::max((1 - p.loss / in.mtbf_seconds) / (1 + p.overhead), 0.0);
  p.waste = 1 - p.goodput;
  return p;
}

std::int64_t least_feasible_k(const TierInputs& in, std::int64_t far_every) {
  const double s = in.step_seconds;
  const double k = std::max({1.0, std::ceil(in.near.durable / s),
                             std::ceil(in.far.durable / (static_cast<double>(far_every) * s))});
  auto whole = static_cast<std::int64_t>(k);
  // ceil of a quotient can land one below where the product rounds the other way.
  for (int nudge = 0; nudge < 2 && !tier_point(in, static_cast<double>(whole), far_every).feasible;
       ++nudge)
    ++whole;
  return whole;
}

TierBest best_tier_intervals(const TierInputs& in, std::int64_t max_far_every, std::int64_t max_k) {
  const std::int64_t top_k = max_k > 0 ? max_k : default_max_k(in);
  TierBest best;
  double best_g = -std::numeric_limits<double>::infinity();
  for (std::int64_t kk = 1; kk <= max_far_every; ++kk) {
    const std::int64_t lo = least_feasible_k(in, kk);
    if (lo > top_k) continue;
    const std::int64_t k = best_k(in, kk, lo, top_k);
    const double g = raw_goodput(in, static_cast<double>(k), kk);
    if (g > best_g) {
      best_g = g;
      best.k = k;
      best.far_every = kk;
    }
  }
  if (best.far_every > 0) best.point = tier_point(in, static_cast<double>(best.k), best.far_every);
  best.far_every_at_cap = best.far_every == max_far_every && max_far_every > 1;
  return best;
}

double first_order_far_every(const TierInputs& in) {
  const double c1 = in.near.stall, extra = in.far.stall - in.near.stall;
  const double p = in.near_recoverable;
  if (extra <= 0 || p <= 0) return 0;
  if (p >= 1 || c1 <= 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(p * extra / ((1 - p) * c1));
}

double first_order_near_interval(const TierInputs& in, double far_every) {
  const double c1 = in.near.stall, c3 = in.far.stall, p = in.near_recoverable;
  return std::sqrt(2 * in.mtbf_seconds * (c1 + (c3 - c1) / far_every) / (p + (1 - p) * far_every));
}

}  // namespace ckpt::harness
