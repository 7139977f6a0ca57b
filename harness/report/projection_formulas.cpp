#include "harness/report/projection_formulas.hpp"

#include <cmath>

namespace ckpt::harness {

double young_interval(double c, double m) {
  return std::sqrt(2 * c * m);
}

double daly_interval(double c, double m) {
  if (c >= 2 * m) return m;
  const double ratio = c / (2 * m);
  return std::sqrt(2 * c * m) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - c;
}

double expected_waste(double tau, double c, double r, double m) {
  return c / tau + (tau / 2 + r) / m;
}

double preset_mtbf_hours(const MtbfPreset& preset, std::int64_t gpus) {
  return preset.days * 24 / preset.interruptions * static_cast<double>(preset.gpus) /
         static_cast<double>(gpus);
}

}  // namespace ckpt::harness
