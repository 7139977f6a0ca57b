#pragma once

// Two-level checkpoint intervals: a near tier (node memory, a node-local disk, peers) written
// every k training steps and a far tier (remote storage) that every K-th of those checkpoints
// also goes to. The analytic goodput of a (k, K) and the search for the best one.
#include <cstdint>

namespace ckpt::harness {

// What one tier costs at full scale, in seconds.
struct TierCost {
  double stall = 0;    // C: training stops this long per checkpoint
  double durable = 0;  // from the checkpoint's start until its copy is usable (>= the stall)
  double restore = 0;  // R: recovery from this tier
};

struct TierInputs {
  TierCost near, far;           // far.stall: the stall of a checkpoint that also goes far
  double step_seconds = 0;      // s: one training step; the near interval is k s
  double near_recoverable = 0;  // p: the share of failures the near tier's copy survives
  double mtbf_seconds = 0;      // M
};

// The model at one (k, K); k may be fractional for drawing curves.
struct TierPoint {
  bool feasible = false;  // k s >= the near time to durable and K k s >= the far one
  double overhead = 0;    // O: stall per second of compute
  double loss = 0;        // F: expected seconds lost per failure (redone work and recovery)
  double goodput = 0;     // G = (1 - F/M) / (1 + O), at least 0
  double waste = 1;       // 1 - G
};

// With tau = k s, a = tau + C1, b = tau + C3 (a near-only and a far checkpoint's period),
// lags l_a = max(D1 - C1, 0), l_b = max(D1 - C3, 0), l_3 = max(D3 - C3, 0) and the far cycle
// L = (K - 1) a + b:
//   O = ((K - 1) C1 + C3) / (K tau)
//   E_near = [((K - 1) a^2 + b^2) / 2 + (K - 1) l_a a + l_b b] / L
//   E_far = L / 2 + l_3
//   F = p (E_near + R1) + (1 - p) (E_far + R3)
// A failure lands uniformly in wall time; it rolls back to the newest usable copy, one period
// further when it strikes before the newest copy is durable.
TierPoint tier_point(const TierInputs& in, double k, std::int64_t far_every);

// The least whole k that meets both times to durable for this K (at least 1).
std::int64_t least_feasible_k(const TierInputs& in, std::int64_t far_every);

inline constexpr std::int64_t kMaxFarEvery = 10'000;

struct TierBest {
  std::int64_t k = 0, far_every = 0;  // k steps, K near checkpoints
  TierPoint point;
  bool far_every_at_cap = false;  // K = the search's cap: the far tier is hardly needed
};

// The feasible (k, K) of the highest goodput, K from 1 to `max_far_every`, k from the least
// feasible to `max_k` (0: up to 4 M / s): for each K a ternary search over k (the waste falls
// while stalls dominate and rises once lost work does), ties to the smaller k and K.
TierBest best_tier_intervals(const TierInputs& in, std::int64_t max_far_every = kMaxFarEvery,
                             std::int64_t max_k = 0);

// First-order guides (stalls and lags small against the intervals): the K that minimises
// (C1 + (C3 - C1)/K)(p + (1 - p) K), K* = sqrt(p (C3 - C1) / ((1 - p) C1)) (0 when C3 <= C1
// or p = 0, infinite when p = 1 or C1 = 0 < C3 - C1), and the near interval for a K,
// tau*(K) = sqrt(2 M (C1 + (C3 - C1)/K) / (p + (1 - p) K)) (Young's sqrt(2 C M) at K = 1,
// p = 0).
double first_order_far_every(const TierInputs& in);
double first_order_near_interval(const TierInputs& in, double far_every);

}  // namespace ckpt::harness
