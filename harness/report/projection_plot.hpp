#pragma once

// The projection's waste charts: a log axis of intervals against waste in percent, as inline SVG.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "harness/report/html_charts.hpp"

namespace ckpt::harness {

inline constexpr int kWasteCurvePoints = 120;

// The plot's geometry: tau from lo to hi on a log axis, waste (percent) from 0 to top.
struct WastePlot {
  double lo, hi, top;
  double x0 = 70, w = 560, y0 = 20, h = 220;
  double px(double tau) const { return x0 + std::log(tau / lo) / std::log(hi / lo) * w; }
  double py(double pct) const { return y0 + h - pct / top * h; }
};

// The part of curve `pct(tau)` inside the plot as an SVG path: it stops where the curve leaves
// through the top (found by bisection) instead of running along it, and is left out where pct is
// NaN.
template <typename Curve>
std::string curve_path(const WastePlot& p, Curve pct) {
  const auto tau_at = [&](int i) {
    return p.lo * std::pow(p.hi / p.lo, static_cast<double>(i) / kWasteCurvePoints);
  };
  const auto crossing = [&](double a, double b) {  // pct(a) and pct(b) on either side of top
    const bool a_in = pct(a) <= p.top;
    for (int k = 0; k < 40; ++k) {
      const double mid = std::sqrt(a * b);
      ((pct(mid) <= p.top) == a_in ? a : b) = mid;
    }
    return a_in ? a : b;
  };
  std::string path;
  bool inside = false;
  double prev_tau = 0, prev = std::nan("");
  for (int i = 0; i <= kWasteCurvePoints; ++i) {
    const double tau = tau_at(i), v = pct(tau);
    const bool in = v <= p.top;
    bool drawing = inside;
    // NaN: the curve is not defined there (an infeasible interval): no edge to look for.
    if (in != inside && !std::isnan(v) && !std::isnan(prev)) {
      const double edge = crossing(prev_tau, tau);
      path +=
          fmt::format("{}{},{} ", in ? "M" : "L", svg_number(p.px(edge)), svg_number(p.py(p.top)));
      drawing = in;
    }
    if (in)
      path +=
          fmt::format("{}{},{} ", drawing ? "L" : "M", svg_number(p.px(tau)), svg_number(p.py(v)));
    inside = in, prev_tau = tau, prev = v;
  }
  return path;
}

// The plot's frame, grid, ticks at round durations (1 s, 10 s, 1 min, ..., 1 year) and the axis
// titles (`x_title` under the interval axis).
std::string waste_axes(const WastePlot& p, const std::string& x_title);

// A solid (or `dash`ed) line's legend entry right of the plot at height y.
std::string curve_legend(const WastePlot& p, double y, const char* color, const char* dash,
                         const std::string& name);

}  // namespace ckpt::harness
