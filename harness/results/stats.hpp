#pragma once

#include <cstddef>
#include <vector>

#include "harness/results/case_result.hpp"

namespace ckpt::harness {

// Median, minimum and maximum of samples (all 0 for none), and how many there were.
struct SampleStats : Spread {
  std::size_t n = 0;
};
SampleStats sample_stats(std::vector<double> samples);

// A two-sided Mann–Whitney U test of x against y.
struct MannWhitney {
  double u = 0;        // U of x: pairs (x_i, y_j) with x_i > y_j, ties counted one half
  double p_value = 1;  // two-sided
  bool exact = false;  // from the exact permutation distribution (else the normal approximation)
};
// Exact when both samples have at most kExactLimit values: the permutation distribution of the
// rank sum with midranks for ties, counted by dynamic programming; p = 2·min(P(U ≤ u), P(U ≥ u)),
// at most 1 (as scipy.stats.mannwhitneyu). Larger samples: the normal approximation with tie
// correction and a continuity correction of 1/2. Empty samples: p = 1.
MannWhitney mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y);
inline constexpr std::size_t kExactLimit = 20;

// The smallest two-sided p-value any data can reach with samples of nx and ny values (all
// distinct, every x above every y): 2 / C(nx + ny, nx). 3 vs 3: 0.1; 4 vs 4: 0.0286.
double smallest_p_value(std::size_t nx, std::size_t ny);

// Samples needed per side before a difference is tested at all; below, "too few samples". A pair of
// sizes whose smallest reachable p-value (smallest_p_value) is not below alpha is also too few:
// with alpha 0.05, 3 vs 3 can reach only p = 0.1, so significance needs at least 4 per side.
inline constexpr std::size_t kMinSamples = 3;
// The one rule of `compare`, `gate` and the report's verdict: samples of nx and ny values are too
// few to call a difference significant at `alpha` when either side has fewer than `min_samples`
// or no data of those sizes could reach p < alpha.
bool too_few_samples(std::size_t nx, std::size_t ny, double alpha,
                     std::size_t min_samples = kMinSamples);

// Median of a list (0 when empty): the mean of the two middle values for an even count.
double median(std::vector<double> values);
// Min, median and max of a list (zeros when empty).
Spread spread(const std::vector<double>& values);

}  // namespace ckpt::harness
