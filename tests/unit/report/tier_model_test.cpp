// The two-level interval model against hand-computed values and brute force, and its Monte Carlo
// against the model.
#include "harness/report/tier_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/report/tier_monte_carlo.hpp"

namespace ckpt::harness {
namespace {

// Steps of 10 s; near: a 2 s stall, durable when it ends, 30 s to restore; far: 8 s stall,
// durable 20 s after the start, 300 s to restore; 3 failures in 4 spare the near tier; M = 10 h.
TierInputs small_job() {
  return {.near = {.stall = 2, .durable = 2, .restore = 30},
          .far = {.stall = 8, .durable = 20, .restore = 300},
          .step_seconds = 10,
          .near_recoverable = 0.75,
          .mtbf_seconds = 36000};
}

TEST(TierModel, OnePointByHand) {
  // k = 6, K = 3: tau = 60, a = 62, b = 68, L = 2 × 62 + 68 = 192, lags 0, 0 and 20 − 8 = 12.
  // O = (2 × 2 + 8) / (3 × 60) = 0.0666667; E_near = (2 × 62² + 68²) / 2 / 192 = 6156 / 192 =
  // 32.0625; E_far = 96 + 12 = 108; F = 0.75 × 62.0625 + 0.25 × 408 = 148.546875;
  // G = (1 − 148.546875 / 36000) / (1 + 1/15) = 0.9336315918.
  const TierPoint p = tier_point(small_job(), 6, 3);
  EXPECT_TRUE(p.feasible);
  EXPECT_DOUBLE_EQ(p.overhead, 12.0 / 180);
  EXPECT_DOUBLE_EQ(p.loss, 148.546875);
  EXPECT_NEAR(p.goodput, 0.933631591796875, 1e-12);
  EXPECT_NEAR(p.waste, 1 - 0.933631591796875, 1e-12);
}

TEST(TierModel, ACopyNotYetDurableCostsOneMorePeriod) {
  // The near copy durable 12 s after its start: lags 10 (near-only, stall 2) and 4 (far, stall
  // 8); E_near = (6156 + 2 × 10 × 62 + 4 × 68) / 192 = 39.9375, F = 154.453125.
  TierInputs in = small_job();
  in.near.durable = 12;
  const TierPoint p = tier_point(in, 6, 3);
  EXPECT_DOUBLE_EQ(p.loss, 154.453125);
  EXPECT_NEAR(p.goodput, 0.933477783203125, 1e-12);
}

TEST(TierModel, FeasibleOnlyWhenEachCopyIsDurableBeforeTheNext) {
  const TierInputs in = small_job();
  // K = 1: every checkpoint goes far, durable after 20 s: k s >= 20, k >= 2.
  EXPECT_FALSE(tier_point(in, 1, 1).feasible);
  EXPECT_TRUE(tier_point(in, 2, 1).feasible);
  EXPECT_EQ(least_feasible_k(in, 1), 2);
  EXPECT_EQ(least_feasible_k(in, 2), 1);  // 2 × 10 s >= 20 s
  TierInputs slow_near = in;
  slow_near.near.durable = 35;  // k s >= 35: k >= 4
  EXPECT_EQ(least_feasible_k(slow_near, 1), 4);
  EXPECT_EQ(least_feasible_k(slow_near, 5), 4);
}

TEST(TierModel, OneTierWithoutLagsIsYoungsModel) {
  // p = 0, K = 1, near = far, durable = stall: O = C/tau, F = (tau + C)/2 + R, and the first-order
  // interval is Young's sqrt(2 C M).
  TierInputs in{.near = {20, 20, 100},
                .far = {20, 20, 100},
                .step_seconds = 1,
                .near_recoverable = 0,
                .mtbf_seconds = 36000};
  const TierPoint p = tier_point(in, 1000, 1);
  EXPECT_DOUBLE_EQ(p.overhead, 0.02);
  EXPECT_DOUBLE_EQ(p.loss, 510 + 100);
  EXPECT_DOUBLE_EQ(first_order_near_interval(in, 1), std::sqrt(2 * 20 * 36000.0));
  EXPECT_EQ(first_order_far_every(in), 0);
}

TEST(TierModel, FirstOrderGuidesByHand) {
  // K* = sqrt(0.75 × 6 / (0.25 × 2)) = 3; tau*(3) = sqrt(2 × 36000 × (2 + 6/3) / 1.5) = 438.178.
  const TierInputs in = small_job();
  EXPECT_DOUBLE_EQ(first_order_far_every(in), 3);
  EXPECT_NEAR(first_order_near_interval(in, 3), 438.17805, 1e-5);
  TierInputs all_near = in;
  all_near.near_recoverable = 1;
  EXPECT_EQ(first_order_far_every(all_near), std::numeric_limits<double>::infinity());
}

// Every (k, K) in the box, the highest goodput (ties to the smaller K, then k).
TierBest brute_force(const TierInputs& in, std::int64_t max_far_every, std::int64_t max_k) {
  TierBest best;
  double best_g = -1e300;
  for (std::int64_t kk = 1; kk <= max_far_every; ++kk) {
    for (std::int64_t k = 1; k <= max_k; ++k) {
      const TierPoint p = tier_point(in, static_cast<double>(k), kk);
      const double g = (1 - p.loss / in.mtbf_seconds) / (1 + p.overhead);
      if (!p.feasible || g <= best_g) continue;
      best_g = g;
      best.k = k, best.far_every = kk, best.point = p;
    }
  }
  return best;
}

TEST(TierModel, SearchFindsTheBruteForceOptimum) {
  TierInputs lagging = small_job();
  lagging.near.durable = 12;
  TierInputs mostly_near = small_job();
  mostly_near.near_recoverable = 0.98;
  TierInputs rarely_near = small_job();
  rarely_near.near_recoverable = 0.2;
  rarely_near.mtbf_seconds = 5000;
  for (const TierInputs& in : {small_job(), lagging, mostly_near, rarely_near}) {
    const std::int64_t max_k = static_cast<std::int64_t>(4 * in.mtbf_seconds / in.step_seconds);
    const TierBest want = brute_force(in, 40, max_k);
    const TierBest got = best_tier_intervals(in, 40);
    EXPECT_EQ(got.k, want.k) << in.near_recoverable;
    EXPECT_EQ(got.far_every, want.far_every) << in.near_recoverable;
    EXPECT_DOUBLE_EQ(got.point.goodput, want.point.goodput);
  }
  // The small job's optimum, near its first-order guide (K* = 3, tau* = 438 s).
  const TierBest b = best_tier_intervals(small_job());
  EXPECT_EQ(b.far_every, 3);
  EXPECT_EQ(b.k, 43);
  EXPECT_FALSE(b.far_every_at_cap);
}

TEST(TierModel, AllFailuresNearPushesKToTheCap) {
  TierInputs in = small_job();
  in.near_recoverable = 1;
  const TierBest b = best_tier_intervals(in, 50);
  EXPECT_EQ(b.far_every, 50);
  EXPECT_TRUE(b.far_every_at_cap);
}

TEST(TierMonteCarlo, NearestRankByHand) {
  const std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(nearest_rank(v, 0.05), 1);  // ceil(0.5) = 1st
  EXPECT_EQ(nearest_rank(v, 0.5), 5);
  EXPECT_EQ(nearest_rank(v, 0.95), 10);  // ceil(9.5) = 10th
  EXPECT_EQ(nearest_rank(v, 0), 1);
  EXPECT_EQ(nearest_rank({}, 0.5), 0);
}

// small_job at k = 6, K = 3: checkpoint i ends its stall at 62 i + 6 floor(i / 3) (every third
// stalls 8 s, not 2); in a 1,920 s job.
TEST(TierMonteCarlo, WithoutFailuresTheStallsAreTheOnlyLoss) {
  // 1,920 s = 10 cycles of 192 s, each with 180 s of compute.
  EXPECT_DOUBLE_EQ(play_trial(small_job(), 6, 3, {}, 1920).goodput, 180.0 / 192);
}

TEST(TierMonteCarlo, AFailureRollsBackToTheNewestUsableCopy) {
  const TierInputs in = small_job();
  // At 965 s: checkpoint 15 ended at 62 × 15 + 30 = 960 s. Near: restore it (30 s), restart at
  // 995 s; by 1,920 s 14 more end (995 + 868 + 24 = 1887) and 33 s of the next step ran:
  // (29 × 60 + 33) / 1920.
  TrialOutcome o = play_trial(in, 6, 3, {{965, true}}, 1920);
  EXPECT_DOUBLE_EQ(o.goodput, 1773.0 / 1920);
  EXPECT_EQ(o.near_recoveries, 1);
  // Far: checkpoint 15's far copy is usable only at 960 + 12 = 972 s, so checkpoint 12's (768 +
  // 12 s): restore (300 s) to 1,265 s, then 10 checkpoints (1265 + 620 + 18 = 1903) and 17 s:
  // (22 × 60 + 17) / 1920.
  o = play_trial(in, 6, 3, {{965, false}}, 1920);
  EXPECT_DOUBLE_EQ(o.goodput, 1337.0 / 1920);
  EXPECT_EQ(o.near_recoveries, 0);
}

TEST(TierMonteCarlo, ANearCopyNotYetDurableIsNotRestored) {
  // Near copies durable 12 s after their start: checkpoint 15 (a far one, stall 8) at 960 + 4 =
  // 964 s, checkpoint 14 at 892 + 10 = 902 s. A failure at 963 s restores 14: restart at 993 s,
  // then 15 checkpoints (993 + 930 + ...) would end past 1,920: 14 do (993 + 868 + 6 × 5 = 1891)
  // and 29 s of the next step: (28 × 60 + 29) / 1920.
  TierInputs in = small_job();
  in.near.durable = 12;
  EXPECT_DOUBLE_EQ(play_trial(in, 6, 3, {{963, true}}, 1920).goodput, 1709.0 / 1920);
}

TEST(TierMonteCarlo, AFailureDuringARecoveryStartsItAgain) {
  // Far failure at 1,000 s: checkpoint 15's far copy (usable at 972 s) is restored until 1,300 s;
  // a failure at 1,100 s finds the near tier emptied, restores 15 from the far tier again until
  // 1,400 s: 8 checkpoints (1400 + 496 + 12 = 1908) and 12 s: (23 × 60 + 12) / 1920.
  const TrialOutcome o = play_trial(small_job(), 6, 3, {{1000, false}, {1100, true}}, 1920);
  EXPECT_DOUBLE_EQ(o.goodput, 1392.0 / 1920);
  EXPECT_EQ(o.near_recoveries, 0);
}

TEST(TierMonteCarlo, AgreesWithTheModelForAFixedSeed) {
  // The best (k, K) of small_job (43, 3) over 400 trials of 30 days (72 failures each). The
  // trials' goodput spreads by about 0.002 (p5 0.9758, p95 0.9821), so the mean's standard error
  // is about 1e-4; the model leaves out failures during a recovery and the near tier emptied by
  // a far failure, terms of order (R/M)^2 and tau/M x (R3 - R1)/M, below 1e-4 here. Agreement
  // within 0.0005 of goodput (5 standard errors).
  const TierInputs in = small_job();
  const MonteCarloSetup setup{.trials = 400, .seed = 1, .job_seconds = 30 * 86400, .trace = {}};
  const MonteCarloGoodput r = monte_carlo_goodput(in, 43, 3, setup);
  const double model = tier_point(in, 43, 3).goodput;
  EXPECT_NEAR(r.mean, model, 0.0005);  // seed 1: 0.979107 against 0.979059
  EXPECT_NEAR(r.failures, 72, 1.5);
  EXPECT_NEAR(r.near_recoveries / r.failures, 0.75, 0.01);
  EXPECT_LE(r.p5, r.p50);
  EXPECT_LE(r.p50, r.p95);
  EXPECT_LT(r.p5, r.mean);
  EXPECT_GT(r.p95, r.mean);
}

TEST(TierMonteCarlo, ATraceIsShiftedPerTrialAndKeepsItsCount) {
  // Ten failures in a 1-day job: every trial sees all ten, each at its own offset, and loses
  // more than the stalls alone: 1 / (1 + (2 × 2 + 8) / (3 × 430)) = 0.99078.
  std::vector<double> trace;
  for (int i = 0; i < 10; ++i) trace.push_back(8000.0 * i + 50.0 * i * i);
  const MonteCarloSetup setup{.trials = 50, .seed = 3, .job_seconds = 86400, .trace = trace};
  const MonteCarloGoodput r = monte_carlo_goodput(small_job(), 43, 3, setup);
  EXPECT_EQ(r.failures, 10);
  EXPECT_GT(r.p5, 0.85);
  EXPECT_LT(r.p5, r.p95);
  EXPECT_LT(r.p95, 1 / (1 + 12.0 / 1290));
}

TEST(TierMonteCarlo, DeterministicForASeed) {
  const TierInputs in = small_job();
  const MonteCarloSetup setup{.trials = 20, .seed = 7, .job_seconds = 7 * 86400, .trace = {}};
  const MonteCarloGoodput a = monte_carlo_goodput(in, 43, 3, setup);
  const MonteCarloGoodput b = monte_carlo_goodput(in, 43, 3, setup);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.p5, b.p5);
  EXPECT_EQ(a.failures, b.failures);
  MonteCarloSetup other = setup;
  other.seed = 8;
  EXPECT_NE(monte_carlo_goodput(in, 43, 3, other).mean, a.mean);
}

}  // namespace
}  // namespace ckpt::harness
