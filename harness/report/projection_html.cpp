// projection_html(): the projection's table and its waste-against-interval charts (inline SVG).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "harness/common/text_format.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/projection.hpp"
#include "harness/report/projection_formulas.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kCurveColor = "#3b6fb6";
constexpr const char* kYoungColor = "#e08a2c";
constexpr const char* kDalyColor = "#59a14f";
constexpr const char* kDurableColor = "#e15759";
constexpr int kCurvePoints = 120;
constexpr std::size_t kMaxCharts = 24;

std::string num(double v) { return fmt::format("{:.1f}", v); }

// Waste (percent) against the interval on a log axis from tau_Daly / 10 to 10 × the largest
// mark, the y axis up to 4 × the least waste, with a vertical line per marked interval.
std::string waste_chart(const CaseProjection& p) {
  const double lo = std::min(p.young_seconds, p.daly_seconds) / 10;
  const double hi = std::max({p.young_seconds, p.daly_seconds, p.durable_seconds}) * 10;
  if (!(lo > 0) || !(hi > lo)) return "<p>No interval to chart (C = 0).</p>";
  const auto waste = [&](double tau) { return 100 * expected_waste(tau, p.checkpoint_seconds, p.restore_seconds, p.mtbf_seconds); };
  const double least = waste(p.daly_seconds);
  const double top = std::max(4 * least, 1e-9);
  const double x0 = 70, w = 560, y0 = 20, h = 220;
  const auto px = [&](double tau) { return x0 + std::log(tau / lo) / std::log(hi / lo) * w; };
  const auto py = [&](double pct) { return y0 + h - std::min(pct, top) / top * h; };
  std::string s = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="waste against interval: {}">)",
                              num(x0 + w + 320), num(y0 + h + 50), html_escape(p.name));
  s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", num(x0), num(y0), num(w), num(h));
  for (int k = 0; k <= 4; ++k) {
    const double pct = top * k / 4;
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#eee"/><text x="{3}" y="{4}" font-size="11" text-anchor="end">{5}%</text>)",
                     num(x0), num(py(pct)), num(x0 + w), num(x0 - 4), num(py(pct) + 4), html_escape(format_significant(pct)));
  }
  // Ticks at round durations: 1 s, 10 s, 1 min, 10 min, 1 h, 6 h, 1 day, 1 week, …
  for (double tick : {0.001, 0.01, 0.1, 1.0, 10.0, 60.0, 600.0, 3600.0, 21600.0, 86400.0, 604800.0, 6048000.0}) {
    if (tick < lo || tick > hi) continue;
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#eee"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>)",
                     num(px(tick)), num(y0), num(y0 + h), num(y0 + h + 14), html_escape(format_interval(tick)));
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">checkpoint interval τ (log scale)</text>)", num(x0 + w / 2), num(y0 + h + 34));
  s += fmt::format(R"svg(<text x="14" y="{0}" font-size="12" transform="rotate(-90 14 {0})" text-anchor="middle">waste (% of training time)</text>)svg", num(y0 + h / 2));
  std::string path;
  for (int i = 0; i <= kCurvePoints; ++i) {
    const double tau = lo * std::pow(hi / lo, static_cast<double>(i) / kCurvePoints);
    path += fmt::format("{}{},{} ", path.empty() ? "M" : "L", num(px(tau)), num(py(waste(tau))));
  }
  s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"/>)", path, kCurveColor);
  struct Mark {
    const char* label;
    double tau;
    const char* color;
  };
  std::vector<Mark> marks{{"τ Young", p.young_seconds, kYoungColor}, {"τ Daly", p.daly_seconds, kDalyColor}};
  if (p.durable_seconds > p.checkpoint_seconds) marks.push_back({"time to durable", p.durable_seconds, kDurableColor});
  double ly = y0 + 10;
  for (const Mark& mark : marks) {
    const std::string title = fmt::format("{} = {}: waste {}", mark.label, format_interval(mark.tau), format_waste(waste(mark.tau) / 100));
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="2" stroke-dasharray="5 3"><title>{4}</title></line>)",
                     num(px(mark.tau)), num(y0), num(y0 + h), mark.color, html_escape(title));
    s += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2" stroke-dasharray="5 3"/><text x="{}" y="{}" font-size="11">{}</text>)",
                     num(x0 + w + 8), num(ly - 4), num(x0 + w + 26), num(ly - 4), mark.color, num(x0 + w + 30), num(ly), html_escape(title));
    ly += 16;
  }
  return s + "</svg>";
}

std::string table_html(const ProjectionModel& m) {
  std::string s = "<table><tr><th>case</th><th>engine</th><th>full-scale</th><th>GPUs</th><th>nodes</th><th>C</th><th>durable</th>"
                  "<th>R</th><th>MTBF</th><th>τ Young</th><th>τ Daly</th><th>interval</th><th>waste</th></tr>";
  for (const CaseProjection& p : m.cases) {
    s += fmt::format("<tr><td>{}</td><td>{}</td>", html_escape(p.name), html_escape(p.engine));
    for (const std::string& cell : std::vector<std::string>{format_bytes(static_cast<std::int64_t>(p.full_bytes)), std::to_string(p.gpus), std::to_string(p.nodes),
          format_interval(p.checkpoint_seconds) + (p.write_capped ? "*" : ""), format_interval(p.durable_seconds),
          format_interval(p.restore_seconds) + (p.read_capped ? "*" : ""), format_interval(p.mtbf_seconds),
          format_interval(p.young_seconds), format_interval(p.daly_seconds), format_interval(p.interval_seconds),
          format_waste(p.waste)}) {
      s += "<td class=n>" + html_escape(cell) + "</td>";
    }
    s += "</tr>";
  }
  return s + "</table>";
}

}  // namespace

std::string projection_section_html(const ProjectionModel& m, const std::string& heading, const std::string& subheading) {
  const auto titled = [](const std::string& tag, const std::string& text) { return "<" + tag + ">" + text + "</" + tag + ">"; };
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
  }
  return s;
}

std::string projection_html(const ProjectionModel& m) {
  std::string title = "ckptbench projection";
  for (const RunRecord& run : m.runs) title += " · " + run.name;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
                  "</title><style>" + html_style() + "</style></head><body><h1>" + html_escape(title) + "</h1>";
  return s + projection_section_html(m, "h2", "h2") + "</body></html>\n";
}

}  // namespace ckpt::harness
