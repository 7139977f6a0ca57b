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

// Median of a list (0 when empty): the mean of the two middle values for an even count.
double median(std::vector<double> values);
// Min, median and max of a list (zeros when empty).
Spread spread(const std::vector<double>& values);

}  // namespace ckpt::harness
