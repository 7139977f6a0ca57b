#include "harness/results/dlio_metrics.hpp"

#include <cmath>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {

DlioMetrics dlio_metrics(std::uint64_t bytes, const std::vector<double>& process0_seconds) {
  DlioMetrics m;
  m.seconds = process0_seconds;
  double seconds_sum = 0;
  for (const double s : process0_seconds) {
    seconds_sum += s;
    if (s > 0) m.gib_per_s.push_back(static_cast<double>(bytes) / s / kGiB);
  }
  if (!process0_seconds.empty()) {
    const auto n = static_cast<double>(process0_seconds.size());
    m.mean_seconds = seconds_sum / n;
    double squares = 0;
    for (const double s : process0_seconds) squares += (s - m.mean_seconds) * (s - m.mean_seconds);
    m.stdev_seconds = std::sqrt(squares / n);
  }
  if (m.gib_per_s.empty()) return m;
  const auto n = static_cast<double>(m.gib_per_s.size());
  double sum = 0;
  for (const double r : m.gib_per_s) sum += r;
  m.mean_gib_per_s = sum / n;
  double squares = 0;
  for (const double r : m.gib_per_s) squares += (r - m.mean_gib_per_s) * (r - m.mean_gib_per_s);
  m.stdev_gib_per_s = std::sqrt(squares / n);
  return m;
}

nlohmann::json to_json(const DlioMetrics& m) {
  return {{"process0_seconds", m.seconds},      {"gib_per_s", m.gib_per_s},
          {"mean_gib_per_s", m.mean_gib_per_s}, {"stdev_gib_per_s", m.stdev_gib_per_s},
          {"mean_seconds", m.mean_seconds},     {"stdev_seconds", m.stdev_seconds}};
}

}  // namespace ckpt::harness
