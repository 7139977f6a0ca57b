#include "harness/results/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ckpt::harness {
namespace {

// Doubled midranks of the pooled samples (integers even with ties), x's first.
std::vector<long> doubled_ranks(const std::vector<double>& x, const std::vector<double>& y,
                                double& tie_term) {
  std::vector<double> pooled(x);
  pooled.insert(pooled.end(), y.begin(), y.end());
  std::vector<std::size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return pooled[a] < pooled[b]; });
  std::vector<long> ranks(pooled.size());
  tie_term = 0;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j < order.size() && pooled[order[j]] == pooled[order[i]]) ++j;
    const long doubled = static_cast<long>(i + 1 + j);  // 2 × mean of ranks i+1 … j
    for (std::size_t k = i; k < j; ++k) ranks[order[k]] = doubled;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  return ranks;
}

// P(doubled rank sum of x ≤ s) and P(≥ s) over every choice of nx of the pooled ranks.
std::pair<double, double> exact_tails(const std::vector<long>& ranks, std::size_t nx,
                                      long observed) {
  const long total = std::accumulate(ranks.begin(), ranks.end(), 0L);
  // ways[k][s]: subsets of k of the ranks seen so far with doubled sum s.
  std::vector<std::vector<double>> ways(
      nx + 1, std::vector<double>(static_cast<std::size_t>(total) + 1, 0.0));
  ways[0][0] = 1;
  for (long r : ranks) {
    for (std::size_t k = nx; k >= 1; --k) {
      for (long s = total; s >= r; --s)
        ways[k][static_cast<std::size_t>(s)] += ways[k - 1][static_cast<std::size_t>(s - r)];
    }
  }
  double all = 0, low = 0, high = 0;
  for (long s = 0; s <= total; ++s) {
    const double w = ways[nx][static_cast<std::size_t>(s)];
    all += w;
    if (s <= observed) low += w;
    if (s >= observed) high += w;
  }
  return {low / all, high / all};
}

}  // namespace

SampleStats sample_stats(std::vector<double> samples) {
  SampleStats s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const std::size_t mid = samples.size() / 2;
  s.median = samples.size() % 2 == 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2;
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

MannWhitney mann_whitney_u(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitney result;
  if (x.empty() || y.empty()) return result;
  const double nx = static_cast<double>(x.size());
  const double ny = static_cast<double>(y.size());
  double tie_term = 0;
  const std::vector<long> ranks = doubled_ranks(x, y, tie_term);
  const long rank_sum_x2 =
      std::accumulate(ranks.begin(), ranks.begin() + static_cast<long>(x.size()), 0L);
  result.u = static_cast<double>(rank_sum_x2) / 2 - nx * (nx + 1) / 2;
  if (x.size() <= kExactLimit && y.size() <= kExactLimit) {
    const auto [low, high] = exact_tails(ranks, x.size(), rank_sum_x2);
    result.p_value = std::min(1.0, 2 * std::min(low, high));
    result.exact = true;
    return result;
  }
  const double n = nx + ny;
  const double mean = nx * ny / 2;
  const double variance = nx * ny / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return result;
  const double z = (std::abs(result.u - mean) - 0.5) / std::sqrt(variance);
  result.p_value = std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
  return result;
}

double smallest_p_value(std::size_t nx, std::size_t ny) {
  if (nx == 0 || ny == 0) return 1;
  double combinations = 1;  // C(nx + ny, nx)
  for (std::size_t i = 1; i <= nx; ++i)
    combinations = combinations * static_cast<double>(ny + i) / static_cast<double>(i);
  return std::min(1.0, 2 / combinations);
}

bool too_few_samples(std::size_t nx, std::size_t ny, double alpha, std::size_t min_samples) {
  return nx < min_samples || ny < min_samples || smallest_p_value(nx, ny) >= alpha;
}

Spread spread(const std::vector<double>& values) {
  if (values.empty()) return {};
  return {*std::min_element(values.begin(), values.end()), median(values),
          *std::max_element(values.begin(), values.end())};
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace ckpt::harness
