// The statistics of report and compare: medians of the samples, the Mann–Whitney U test's exact
// and approximate two-sided p-values against values computed by hand (and by enumerating every
// split of the pooled samples), the smallest reachable p-value, and the verdict rules.
#include <gtest/gtest.h>

#include <vector>

#include "harness/report/compare.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

TEST(SampleStats, MedianMinMax) {
  const SampleStats odd = sample_stats({2.0, 0.5, 1.0});
  EXPECT_DOUBLE_EQ(odd.median, 1.0);
  EXPECT_DOUBLE_EQ(odd.min, 0.5);
  EXPECT_DOUBLE_EQ(odd.max, 2.0);
  EXPECT_EQ(odd.n, 3u);
  EXPECT_DOUBLE_EQ(sample_stats({4, 1, 3, 2}).median, 2.5);
  EXPECT_EQ(sample_stats({}).n, 0u);
}

// x below every y: U = 0; the exact null distribution has C(8,4) = 70 equally likely splits, one
// of them as extreme on each side: p = 2/70 (scipy: mannwhitneyu(x, y, method="exact") 0.02857).
TEST(MannWhitney, ExactWithoutTies) {
  const MannWhitney t = mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8});
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 0);
  EXPECT_NEAR(t.p_value, 2.0 / 70, 1e-12);
  const MannWhitney reversed = mann_whitney_u({5, 6, 7, 8}, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(reversed.u, 16);
  EXPECT_NEAR(reversed.p_value, 2.0 / 70, 1e-12);
  EXPECT_NEAR(mann_whitney_u({1, 2, 3}, {4, 5, 6}).p_value, 0.1, 1e-12);
}

// Ties: pooled 1 2 2 2 3 3 4 5 have midranks 1, 3, 3, 3, 5.5, 5.5, 7, 8; x = {1, 2, 2, 3} sums to
// 12.5, U = 12.5 - 10 = 2.5. Of the 70 ways to pick four of the eight ranks, 7 sum to at most
// 12.5: {1, 3, 3, 3} = 10 once, {1, 3, 3, 5.5} = 12.5 in 3 × 2 ways; so p = 2 · 7/70 = 0.2.
TEST(MannWhitney, ExactWithTiesUsesMidranks) {
  const MannWhitney t = mann_whitney_u({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 2.5);
  EXPECT_NEAR(t.p_value, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_u({1, 1, 2}, {1, 2, 2}).p_value, 1.0);  // capped at 1
  EXPECT_DOUBLE_EQ(mann_whitney_u({3, 3, 3}, {3, 3, 3}).p_value, 1.0);  // all tied
}

std::vector<double> range(double from, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(from + i);
  return v;
}

// 25 vs 25, disjoint: U = 0, mean 312.5, variance 25·25·51/12 = 2656.25,
// z = (312.5 - 0.5)/51.539 = 6.0537, p = erfc(z/√2) = 1.4157e-9.
TEST(MannWhitney, NormalApproximationAboveTheExactLimit) {
  const MannWhitney t = mann_whitney_u(range(1, 25), range(26, 25));
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 0);
  EXPECT_NEAR(t.p_value, 1.4156562e-9, 1e-15);
}

// 21 vs 21 with three tie groups (ten 1s, 21 2s, eleven 3s): midranks 5.5, 21, 37; U = 55;
// tie term 990 + 9240 + 1320 = 11550; variance 441/12·(43 - 11550/1722) = 1333.76;
// z = (220.5 - 55 - 0.5)/36.52 = 4.518; p = 6.2428e-6.
TEST(MannWhitney, NormalApproximationWithTieCorrection) {
  std::vector<double> x(10, 1.0), y(10, 2.0);
  x.insert(x.end(), 11, 2.0);
  y.insert(y.end(), 11, 3.0);
  const MannWhitney t = mann_whitney_u(x, y);
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 55);
  EXPECT_NEAR(t.p_value, 6.2427991e-6, 1e-12);
}

TEST(MannWhitney, EmptySampleGivesOne) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1.0);
}

TEST(MannWhitney, ExactUpToTwentyPerSide) {
  const MannWhitney t = mann_whitney_u(range(1, 20), range(21, 20));
  EXPECT_TRUE(t.exact);
  EXPECT_NEAR(t.p_value, smallest_p_value(20, 20), 1e-20);
}

TEST(SmallestPValue, IsTwoOverTheSplits) {
  EXPECT_NEAR(smallest_p_value(3, 3), 0.1, 1e-12);
  EXPECT_NEAR(smallest_p_value(4, 4), 2.0 / 70, 1e-12);
  EXPECT_NEAR(smallest_p_value(3, 5), 2.0 / 56, 1e-12);
  EXPECT_DOUBLE_EQ(smallest_p_value(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(smallest_p_value(0, 4), 1.0);
}

SampleStats stats(std::vector<double> v) {
  return sample_stats(std::move(v));
}

TEST(Verdict, FasterSlowerNoChange) {
  const std::vector<double> slow{1, 1.1, 1.2, 1.3}, fast{2, 2.1, 2.2, 2.3};
  EXPECT_EQ(decide(stats(slow), stats(fast), mann_whitney_u(fast, slow), 0.05), Verdict::faster);
  EXPECT_EQ(decide(stats(fast), stats(slow), mann_whitney_u(slow, fast), 0.05), Verdict::slower);
  const std::vector<double> mixed{1.05, 2.05, 1.15, 2.15};
  EXPECT_EQ(decide(stats(slow), stats(mixed), mann_whitney_u(mixed, slow), 0.05),
            Verdict::no_change);
  // p = 0.0286 is not below an alpha of 0.01.
  EXPECT_EQ(decide(stats(slow), stats(fast), mann_whitney_u(fast, slow), 0.01), Verdict::too_few);
}

TEST(Verdict, TooFewSamples) {
  const std::vector<double> a{1, 1.1, 1.2}, b{2, 2.1, 2.2};
  // 3 vs 3 reaches at best p = 0.1: no verdict at alpha 0.05, one at alpha 0.15.
  EXPECT_EQ(decide(stats(a), stats(b), mann_whitney_u(b, a), 0.05), Verdict::too_few);
  EXPECT_EQ(decide(stats(a), stats(b), mann_whitney_u(b, a), 0.15), Verdict::faster);
  const std::vector<double> two{2, 2.1};
  EXPECT_EQ(decide(stats(a), stats(two), mann_whitney_u(two, a), 0.5),
            Verdict::too_few);  // below kMinSamples
  EXPECT_EQ(verdict_text(Verdict::too_few), "too few samples");
  EXPECT_EQ(verdict_text(Verdict::no_change), "no significant change");
}

}  // namespace
}  // namespace ckpt::harness
