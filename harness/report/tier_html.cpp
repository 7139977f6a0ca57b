// tier_section_html(): the two-level part of the projection page, with waste against the near
// interval for several K as inline SVG.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "harness/report/html_report.hpp"
#include "harness/report/projection.hpp"
#include "harness/report/projection_plot.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/tier_projection.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kCurveColors[] = {"#4e79a7", "#f28e2b", "#59a14f",
                                        "#76b7b2", "#b07aa1", "#edc948"};
constexpr const char* kBestColor = "#e15759";
constexpr const char* kFarOnlyColor = "#777";
constexpr double kChartedFactors[] = {0, 0.25, 0.5, 1, 2, 4};  // of the best K; 0: K = 1
constexpr const char* kChartNote =
    "<p>Waste = 1 − goodput of the analytic model against the near interval k·s, one curve per K "
    "(far interval K·k·s); a curve starts at the least k whose copies are durable before the "
    "next checkpoint and ends where it passes the top of the chart (4× the least waste). The dot "
    "is the best (k, K); the dashed curve writes every checkpoint to the far tier.</p>";

// K = 1 and the best K's fractions and multiples, each once, ascending.
std::vector<std::int64_t> charted_far_every(std::int64_t best) {
  std::vector<std::int64_t> out;
  for (double f : kChartedFactors) {
    const std::int64_t kk = f == 0
                                ? 1
                                : std::clamp<std::int64_t>(
                                      std::llround(static_cast<double>(best) * f), 1, kMaxFarEvery);
    if (std::find(out.begin(), out.end(), kk) == out.end()) out.push_back(kk);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Waste in percent at the near interval tau, NaN where (tau, K) is infeasible.
double waste_pct(const TierInputs& in, double tau, std::int64_t far_every) {
  const TierPoint p = tier_point(in, tau / in.step_seconds, far_every);
  return p.feasible ? 100 * p.waste : std::nan("");
}

std::string tier_chart(const TierProjection& t) {
  const TierInputs& in = t.inputs;
  TierInputs far_alone = in;
  far_alone.near = in.far;
  const double best_tau = static_cast<double>(t.best.k) * in.step_seconds;
  double lo = best_tau / 10, hi = best_tau * 10;
  if (t.far_only.far_every > 0) {
    const double far_tau = static_cast<double>(t.far_only.k) * in.step_seconds;
    lo = std::min(lo, far_tau / 10), hi = std::max(hi, far_tau * 10);
  }
  const double best_waste = 100 * t.best.point.waste;
  const WastePlot plot{std::max(lo, in.step_seconds), hi, std::max(4 * best_waste, 1e-9)};
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="waste against the near interval, one curve per K">)",
      svg_number(plot.x0 + plot.w + 320), svg_number(plot.y0 + plot.h + 50));
  s += waste_axes(plot, "near interval k·s (log scale)");
  double legend_y = plot.y0 + 10;
  std::size_t color = 0;
  for (std::int64_t kk : charted_far_every(t.best.far_every)) {
    const char* c = kCurveColors[color++ % std::size(kCurveColors)];
    s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)",
                     curve_path(plot, [&](double tau) { return waste_pct(in, tau, kk); }), c);
    s += curve_legend(plot, legend_y, c, "",
                      fmt::format("K = {}{}", kk, kk == t.best.far_every ? " (best)" : ""));
    legend_y += 16;
  }
  const char* dashed = R"( stroke-dasharray="5 3")";
  s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"{}/>)",
                   curve_path(plot, [&](double tau) { return waste_pct(far_alone, tau, 1); }),
                   kFarOnlyColor, dashed);
  s += curve_legend(plot, legend_y, kFarOnlyColor, dashed, "far tier only");
  const std::string title =
      fmt::format("best: k = {} ({}), K = {}: waste {}", t.best.k, format_interval(best_tau),
                  t.best.far_every, format_waste(t.best.point.waste));
  s += fmt::format(R"(<circle cx="{}" cy="{}" r="5" fill="{}"><title>{}</title></circle>)",
                   svg_number(plot.px(best_tau)), svg_number(plot.py(best_waste)), kBestColor,
                   html_escape(title));
  s += fmt::format(
      R"(<circle cx="{}" cy="{}" r="5" fill="{}"/><text x="{}" y="{}" font-size="11">{}</text>)",
      svg_number(plot.x0 + plot.w + 17), svg_number(legend_y + 12), kBestColor,
      svg_number(plot.x0 + plot.w + 30), svg_number(legend_y + 16), html_escape(title));
  return s + "</svg>";
}

}  // namespace

std::string tier_section_html(const TierProjection& t, const std::string& heading) {
  const TierTables tables = tier_tables(t);
  std::string s = "<" + heading + ">Two-level checkpoint intervals</" + heading + ">";
  s += html_table(tables.tiers, tables.tier_rows, 3);
  s += "<p class=\"verdict\">" + html_escape(tables.headline) + "</p>";
  s += html_table(tables.schemes, tables.scheme_rows, 1);
  s += "<pre>" + html_escape(tables.rules) + "</pre>";
  return s + tier_chart(t) + kChartNote;
}

}  // namespace ckpt::harness
