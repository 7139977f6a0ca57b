// projection_html(): the projection's table and its waste-against-interval charts (inline SVG).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <vector>

#include "harness/common/text_format.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/projection.hpp"
#include "harness/report/projection_formulas.hpp"
#include "harness/report/projection_plot.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kCurveColor = "#3b6fb6";
constexpr const char* kYoungColor = "#e08a2c";
constexpr const char* kDalyColor = "#59a14f";
constexpr const char* kDurableColor = "#e15759";
constexpr const char* kPartColor = "#777";
constexpr std::size_t kMaxCharts = 24;
constexpr const char* kChartNote =
    "<p>Checkpointing more often than τ Daly spends more time writing checkpoints (C/τ); less "
    "often, more work "
    "is lost and redone after each failure ((τ/2 + R)/M). Each curve ends where it passes the top "
    "of the chart "
    "(4× the least waste); the interval axis spans a decade beyond the outermost marked "
    "interval.</p>";

// The two regions either side of tau Daly, named inside the plot by what dominates the waste there.
std::string waste_regions(const WastePlot& p, double daly) {
  const double split = p.px(daly);
  return fmt::format(
             R"(<text x="{}" y="{}" font-size="11" fill="#555">← too often: C/τ dominates</text>)",
             svg_number(p.x0 + 6), svg_number(p.y0 + p.h - 8)) +
         fmt::format(
             R"(<text x="{}" y="{}" font-size="11" fill="#555" text-anchor="end">too rarely: (τ/2 + R)/M dominates →</text>)",
             svg_number(p.x0 + p.w - 6), svg_number(p.y0 + p.h - 8)) +
         fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ccc"/>)",
                     svg_number(split), svg_number(p.y0 + p.h - 20), svg_number(p.y0 + p.h));
}

struct Mark {
  const char* label;
  double tau;
  const char* color;
};

// A dashed vertical line per marked interval with its legend entry (interval and waste there).
std::string waste_marks(const WastePlot& p, const std::vector<Mark>& marks, double legend_y,
                        const std::function<double(double)>& waste) {
  std::string s;
  double ly = legend_y;
  for (const Mark& mark : marks) {
    const std::string title =
        fmt::format("{} = {}: waste {}", mark.label, format_interval(mark.tau),
                    format_waste(waste(mark.tau) / 100));
    s += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="2" stroke-dasharray="5 3"><title>{4}</title></line>)",
        svg_number(p.px(mark.tau)), svg_number(p.y0), svg_number(p.y0 + p.h), mark.color,
        html_escape(title));
    s += fmt::format(
        R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2" stroke-dasharray="5 3"/><text x="{}" y="{}" font-size="11">{}</text>)",
        svg_number(p.x0 + p.w + 8), svg_number(ly - 4), svg_number(p.x0 + p.w + 26),
        svg_number(ly - 4), mark.color, svg_number(p.x0 + p.w + 30), svg_number(ly),
        html_escape(title));
    ly += 16;
  }
  return s;
}

// Waste (percent) against the interval on a log axis wide enough for every marked interval (a
// decade beyond the outermost), the y axis up to 4 × the least waste: the total and its two
// parts, each ending where it leaves the plot, the regions either side of tau Daly named, and a
// vertical line per marked interval (tau Young, tau Daly, the time to durable).
std::string waste_chart(const CaseProjection& p) {
  std::vector<Mark> marks{{"τ Young", p.young_seconds, kYoungColor},
                          {"τ Daly", p.daly_seconds, kDalyColor}};
  if (p.durable_seconds > p.checkpoint_seconds)
    marks.push_back({"time to durable", p.durable_seconds, kDurableColor});
  double lo = 1e300, hi = 0;
  for (const Mark& m : marks) lo = std::min(lo, m.tau / 10), hi = std::max(hi, m.tau * 10);
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return "<p>No interval to chart (C = 0).</p>";
  const std::function<double(double)> waste = [&](double tau) {
    return 100 * expected_waste(tau, p.checkpoint_seconds, p.restore_seconds, p.mtbf_seconds);
  };
  const WastePlot plot{lo, hi, std::max(4 * waste(p.daly_seconds), 1e-9)};
  std::string s = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="waste against interval: {}">)",
      svg_number(plot.x0 + plot.w + 320), svg_number(plot.y0 + plot.h + 50), html_escape(p.name));
  s += waste_axes(plot, "checkpoint interval τ (log scale)") + waste_regions(plot, p.daly_seconds);
  const auto writing = [&](double tau) { return 100 * p.checkpoint_seconds / tau; };
  const auto losing = [&](double tau) {
    return 100 * (tau / 2 + p.restore_seconds) / p.mtbf_seconds;
  };
  s += fmt::format(
      R"(<path d="{}" fill="none" stroke="{}" stroke-width="1" stroke-dasharray="3 3"/>)",
      curve_path(plot, writing), kPartColor);
  s += fmt::format(
      R"(<path d="{}" fill="none" stroke="{}" stroke-width="1" stroke-dasharray="1 3"/>)",
      curve_path(plot, losing), kPartColor);
  s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)",
                   curve_path(plot, waste), kCurveColor);
  s += curve_legend(plot, plot.y0 + 10, kCurveColor, "", "waste = C/τ + (τ/2 + R)/M");
  s += curve_legend(plot, plot.y0 + 26, kPartColor, R"( stroke-width="1" stroke-dasharray="3 3")",
                    "C/τ: time spent checkpointing");
  s += curve_legend(plot, plot.y0 + 42, kPartColor, R"( stroke-width="1" stroke-dasharray="1 3")",
                    "(τ/2 + R)/M: work lost to failures");
  return s + waste_marks(plot, marks, plot.y0 + 62, waste) + "</svg>";
}

std::string table_html(const ProjectionModel& m) {
  std::string s =
      "<table><tr><th>case</th><th>engine</th><th>full-scale</th><th>GPUs</th><th>nodes</th><th>C</"
      "th><th>durable</th>"
      "<th>R</th><th>MTBF</th><th>τ Young</th><th>τ Daly</th><th>interval</th><th>waste</th></tr>";
  for (const CaseProjection& p : m.cases) {
    s += fmt::format("<tr><td>{}</td><td>{}</td>", html_escape(p.name), html_escape(p.engine));
    for (const std::string& cell : std::vector<std::string>{
             format_bytes(static_cast<std::int64_t>(p.full_bytes)), std::to_string(p.gpus),
             std::to_string(p.nodes),
             format_interval(p.checkpoint_seconds) + (p.write_capped ? "*" : ""),
             format_interval(p.durable_seconds),
             format_interval(p.restore_seconds) + (p.read_capped ? "*" : ""),
             format_interval(p.mtbf_seconds), format_interval(p.young_seconds),
             format_interval(p.daly_seconds), format_interval(p.interval_seconds),
             format_waste(p.waste)}) {
      s += "<td class=n>" + html_escape(cell) + "</td>";
    }
    s += "</tr>";
  }
  return s + "</table>";
}

}  // namespace

std::string projection_section_html(const ProjectionModel& m, const std::string& heading,
                                    const std::string& subheading) {
  const auto titled = [](const std::string& tag, const std::string& text) {
    return "<" + tag + ">" + text + "</" + tag + ">";
  };
  if (m.cases.empty()) return m.tiers ? tier_section_html(*m.tiers, heading) : "";
  std::string s = titled(heading, "Full-scale checkpoint cost") + table_html(m);
  std::ostringstream rules;
  print_projection(m, false, rules);  // the same rules as the text, after its table
  const std::string text = rules.str();
  const std::size_t notes = text.find("\nfull-scale:");
  s += "<pre>" + html_escape(notes == std::string::npos ? text : text.substr(notes + 1)) + "</pre>";
  std::size_t charted = 0;
  for (const CaseProjection& p : m.cases) {
    if (charted++ == kMaxCharts) {
      s += fmt::format("<p>{} more cases not charted.</p>", m.cases.size() - kMaxCharts);
      break;
    }
    s += titled(subheading, "Waste against interval: " + html_escape(p.name)) + waste_chart(p);
    if (charted == 1) s += kChartNote;
  }
  if (m.tiers) s += tier_section_html(*m.tiers, heading);
  return s;
}

std::string projection_html(const ProjectionModel& m) {
  std::string title = "ckptbench projection";
  for (const RunRecord& run : m.runs) title += " · " + run.name;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                  html_escape(title) + "</title><style>" + html_style() +
                  "</style></head><body><h1>" + html_escape(title) + "</h1>";
  return s + projection_section_html(m, "h2", "h2") + "</body></html>\n";
}

}  // namespace ckpt::harness
