#include "harness/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/report/latency_table.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kWriteColor = "#3b6fb6";
constexpr const char* kReadColor = "#e08a2c";
constexpr const char* kPhaseColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr double kPlotWidth = 560;

std::string num(double v) { return fmt::format("{:.1f}", v); }

// A swept value as the axis shows it: integers (threads, bytes) without decimals.
std::string value_label(double v) {
  return v == std::floor(v) && std::abs(v) < 1e15 ? fmt::format("{}", static_cast<long long>(v)) : format_significant(v);
}

// A round step for about `ticks` axis ticks up to `top`.
double nice_step(double top, int ticks) {
  const double raw = top / ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double f : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= f * magnitude) return f * magnitude;
  }
  return 10 * magnitude;
}

// Room for the longest case name left of the bars (12 px sans-serif: about 7 px a character).
double label_width(const ReportModel& m) {
  std::size_t longest = 0;
  for (const ReportRow& r : m.rows) longest = std::max(longest, display_width(r.full_name));
  return std::max(120.0, 7.0 * static_cast<double>(longest) + 12);
}

std::string axis_x(double lw, double top, double y0, double height, const std::string& unit) {
  std::string s;
  const double step = nice_step(top, 5);
  for (double t = 0; t <= top * 1.0001; t += step) {
    const double x = lw + t / top * kPlotWidth;
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>)",
                     num(x), num(y0), num(y0 + height), num(y0 + height + 14), html_escape(format_significant(t)));
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", num(lw + kPlotWidth / 2),
                   num(y0 + height + 30), html_escape(unit));
  return s;
}

// Horizontal bars: per case a write and a read bar (median) with a min–max whisker.
std::string bandwidth_chart(const ReportModel& m) {
  double top = 0;
  for (const ReportRow& r : m.rows) top = std::max({top, r.write.max, r.read.max});
  if (!(top > 0)) return "<p>No bandwidth samples to chart.</p>";
  top *= 1.05;
  const double lw = label_width(m);
  const double row_height = 34, y0 = 24;
  const double height = row_height * static_cast<double>(m.rows.size());
  std::string s = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="bandwidth per case">)",
                              num(lw + kPlotWidth + 20), num(y0 + height + 40));
  s += fmt::format(R"(<rect x="{}" y="4" width="12" height="10" fill="{}"/><text x="{}" y="13" font-size="11">write</text>)", num(lw), kWriteColor, num(lw + 16));
  s += fmt::format(R"(<rect x="{}" y="4" width="12" height="10" fill="{}"/><text x="{}" y="13" font-size="11">read</text>)", num(lw + 60), kReadColor, num(lw + 76));
  s += axis_x(lw, top, y0, height, "GiB/s (median, whiskers min–max)");
  double y = y0;
  for (const ReportRow& r : m.rows) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", num(lw - 6), num(y + 20), html_escape(r.full_name));
    int k = 0;
    for (const SampleStats* sp : {&r.write, &r.read}) {
      const double by = y + 4 + 13 * k;
      const char* color = k++ == 0 ? kWriteColor : kReadColor;
      if (sp->n == 0) continue;
      const auto px = [&](double v) { return lw + v / top * kPlotWidth; };
      s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="11" fill="{}"><title>{}</title></rect>)", num(lw), num(by),
                       num(px(sp->median) - lw), color, html_escape(r.full_name + ": " + spread_text(*sp) + " GiB/s"));
      s += fmt::format(R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#222"/><line x1="{0}" y1="{3}" x2="{0}" y2="{4}" stroke="#222"/><line x1="{1}" y1="{3}" x2="{1}" y2="{4}" stroke="#222"/>)",
                       num(px(sp->min)), num(px(sp->max)), num(by + 5.5), num(by + 2), num(by + 9));
    }
    y += row_height;
  }
  return s + "</svg>";
}

// Median bandwidth against a numeric swept key, one line per direction and per combination of
// the other swept keys (and run).
// The points of a line chart: (the other keys, direction) -> (key value, median GiB/s).
struct LineSeries {
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> series;
  double xmin = 1e300, xmax = -1e300, top = 0;
};

LineSeries line_series(const ReportModel& m, const std::string& key) {
  LineSeries l;
  auto& [series, xmin, xmax, top] = l;
  for (const ReportRow& r : m.rows) {
    const auto x = r.c->number_of(key);
    if (!x) continue;
    nlohmann::json rest = r.c->swept;
    rest.erase(key);
    const std::string name = (m.runs.size() > 1 ? r.c->run + ": " : "") + (rest.empty() ? "" : swept_label(rest) + " ");
    if (r.write.n) series[{name, "write"}].emplace_back(*x, r.write.median);
    if (r.read.n) series[{name, "read"}].emplace_back(*x, r.read.median);
    xmin = std::min(xmin, *x), xmax = std::max(xmax, *x);
    top = std::max({top, r.write.median, r.read.median});
  }
  return l;
}

std::string line_chart(const ReportModel& m, const std::string& key) {
  LineSeries l = line_series(m, key);
  // Plain references, not a structured binding: clang 14 (the fuzz build) cannot capture those.
  auto& series = l.series;
  const double xmin = l.xmin, xmax = l.xmax;
  double& top = l.top;
  if (series.empty() || !(xmax > xmin) || !(top > 0)) return "";
  top *= 1.1;
  const bool log_x = xmin > 0 && xmax / xmin >= 16;
  const double x0 = 70, w = 640, y0 = 20, h = 260;
  const auto px = [&](double v) {
    const double f = log_x ? std::log(v / xmin) / std::log(xmax / xmin) : (v - xmin) / (xmax - xmin);
    return x0 + f * w;
  };
  const auto py = [&](double v) { return y0 + h - v / top * h; };
  std::string s = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="bandwidth against {}">)",
                              num(x0 + w + 260), num(y0 + h + 50), html_escape(key));
  s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)", num(x0), num(y0), num(w), num(h));
  const double step = nice_step(top, 5);
  for (double t = 0; t <= top; t += step) {
    s += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#eee"/><text x="{3}" y="{4}" font-size="11" text-anchor="end">{5}</text>)",
                     num(x0), num(py(t)), num(x0 + w), num(x0 - 4), num(py(t) + 4), html_escape(format_significant(t)));
  }
  std::vector<double> xs;
  for (const auto& [name, points] : series) for (const auto& p : points) xs.push_back(p.first);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double x : xs) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)", num(px(x)), num(y0 + h + 14), html_escape(value_label(x)));
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}{}</text>)", num(x0 + w / 2), num(y0 + h + 34),
                   html_escape(key), log_x ? " (log scale)" : "");
  s += fmt::format(R"svg(<text x="14" y="{}" font-size="12" transform="rotate(-90 14 {})" text-anchor="middle">GiB/s (median)</text>)svg", num(y0 + h / 2), num(y0 + h / 2));
  std::size_t i = 0;
  std::map<std::string, std::size_t> colors;  // one colour per combination: write solid, read dashed
  for (auto& [id, points] : series) {
    std::sort(points.begin(), points.end());
    const std::string name = id.first + id.second;
    const char* color = kPhaseColors[colors.emplace(id.first, colors.size()).first->second % std::size(kPhaseColors)];
    const char* dash = id.second == "read" ? R"( stroke-dasharray="6 4")" : "";
    std::string path;
    for (const auto& [x, v] : points) path += fmt::format("{}{},{} ", path.empty() ? "M" : "L", num(px(x)), num(py(v)));
    s += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", path, color, dash);
    for (const auto& [x, v] : points) {
      s += fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="{}"><title>{}</title></circle>)", num(px(x)), num(py(v)), color,
                       html_escape(fmt::format("{} {}={}: {} GiB/s", name, key, value_label(x), format_significant(v))));
    }
    const double ly = y0 + 10 + 16 * static_cast<double>(i);
    s += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"{}/><text x="{}" y="{}" font-size="11">{}</text>)",
                     num(x0 + w + 8), num(ly - 4), num(x0 + w + 26), num(ly - 4), color, dash, num(x0 + w + 30), num(ly), html_escape(name));
    ++i;
  }
  return s + "</svg>";
}

// Per case a stacked bar of the checkpoint's (or restore's) phase medians.
std::string phase_chart(const ReportModel& m, const std::vector<std::string>& phases, bool write) {
  if (phases.empty()) return "";
  double top = 0;
  for (const ReportRow& r : m.rows) {
    double sum = 0;
    for (const auto& [name, s] : (write ? r.c->write : r.c->read).phases) sum += s;
    top = std::max(top, sum);
  }
  if (!(top > 0)) return "";
  top *= 1.05;
  const double lw = label_width(m);
  const double row_height = 22, y0 = 24;
  const double height = row_height * static_cast<double>(m.rows.size());
  std::string s = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="{} phases">)",
                              num(lw + kPlotWidth + 20), num(y0 + height + 40), write ? "checkpoint" : "restore");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const double lx = lw + 80 * static_cast<double>(i);
    s += fmt::format(R"(<rect x="{}" y="4" width="12" height="10" fill="{}"/><text x="{}" y="13" font-size="11">{}</text>)", num(lx),
                     kPhaseColors[i % std::size(kPhaseColors)], num(lx + 16), html_escape(phases[i]));
  }
  s += axis_x(lw, top, y0, height, "seconds (median per phase, stacked)");
  double y = y0;
  for (const ReportRow& r : m.rows) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)", num(lw - 6), num(y + 15), html_escape(r.full_name));
    double x = lw;
    const auto& values = (write ? r.c->write : r.c->read).phases;
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const auto it = values.find(phases[i]);
      if (it == values.end()) continue;
      const double w = it->second / top * kPlotWidth;
      s += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="16" fill="{}"><title>{}</title></rect>)", num(x), num(y + 3), fmt::format("{:.2f}", w),
                       kPhaseColors[i % std::size(kPhaseColors)], html_escape(fmt::format("{} {}: {} s", r.full_name, phases[i], format_significant(it->second))));
      x += w;
    }
    y += row_height;
  }
  return s + "</svg>";
}

// The text report's Markdown tables as HTML tables.
std::string tables_html(const ReportModel& m) {
  std::string s;
  const bool speedups = !m.options.baseline.empty();
  s += "<h2>Bandwidth</h2><table><tr><th>case</th><th>status</th><th>write GiB/s</th><th>read GiB/s</th>";
  if (speedups) s += "<th>write ×</th><th>read ×</th>";
  s += "</tr>";
  std::string group = "\x01";
  for (const ReportRow& r : m.rows) {
    if (!m.options.by.empty() && r.group != group) {
      s += fmt::format(R"(<tr><th colspan="{}" class="group">{} = {}</th></tr>)", speedups ? 6 : 4, html_escape(m.options.by), html_escape(group = r.group));
    }
    s += fmt::format("<tr><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td>", html_escape(r.name), html_escape(r.c->status),
                     html_escape(r.c->stores_data ? spread_text(r.write) : "—"), html_escape(r.c->stores_data ? spread_text(r.read) : "—"));
    if (speedups) s += fmt::format("<td class=n>{}</td><td class=n>{}</td>", html_escape(speedup_text(r.write_speedup)), html_escape(speedup_text(r.read_speedup)));
    s += "</tr>";
  }
  s += "</table>";
  if (speedups) s += "<p>×: median bandwidth / the baseline's (" + html_escape(m.options.baseline) + ")</p>";
  s += "<h2>Phases (median seconds)</h2><table><tr><th>case</th>";
  for (const std::string& p : m.write_phases) s += "<th>write " + html_escape(p) + "</th>";
  for (const std::string& p : m.read_phases) s += "<th>read " + html_escape(p) + "</th>";
  if (m.has_stall) s += "<th>stall</th>";
  if (m.has_durable) s += "<th>time to durable</th>";
  s += "</tr>";
  const auto cell = [](const std::map<std::string, double>& v, const std::string& p) {
    return "<td class=n>" + (v.count(p) ? html_escape(format_significant(v.at(p))) : std::string("-")) + "</td>";
  };
  const std::size_t columns = 1 + m.write_phases.size() + m.read_phases.size() + (m.has_stall ? 1 : 0) + (m.has_durable ? 1 : 0);
  group = "\x01";
  for (const ReportRow& r : m.rows) {
    if (!m.options.by.empty() && r.group != group) {
      s += fmt::format(R"(<tr><th colspan="{}" class="group">{} = {}</th></tr>)", columns, html_escape(m.options.by), html_escape(group = r.group));
    }
    s += "<tr><td>" + html_escape(r.name) + "</td>";
    for (const std::string& p : m.write_phases) s += cell(r.c->write.phases, p);
    for (const std::string& p : m.read_phases) s += cell(r.c->read.phases, p);
    if (m.has_stall) s += "<td class=n>" + (r.c->stall_seconds ? format_significant(*r.c->stall_seconds) : "-") + "</td>";
    if (m.has_durable) s += "<td class=n>" + (r.c->time_to_durable_seconds ? format_significant(*r.c->time_to_durable_seconds) : "-") + "</td>";
    s += "</tr>";
  }
  return s + "</table>";
}

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string html_style() {
  return "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0}"
         "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}th{background:#f2f2f2}td.n{text-align:right;"
         "font-variant-numeric:tabular-nums}th.group{text-align:left;background:#e6eef8}svg{display:block;margin:8px 0}pre{white-space:pre-wrap}";
}

std::string html_report(const ReportModel& m, const ProjectionModel* projection) {
  std::string title = "ckptbench report";
  for (const RunRecord& run : m.runs) title += " · " + run.name;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) + "</title>";
  s += "<style>" + html_style() + "</style>";
  s += "</head><body><h1>" + html_escape(title) + "</h1><h2>Runs</h2><ul>";
  for (const RunRecord& run : m.runs) {
    s += fmt::format("<li>{}: {} cases ({})</li>", html_escape(run.name), run.cases.size(), html_escape(run.file.string()));
  }
  s += "</ul>";
  const auto differences = config_differences(m);
  if (!differences.empty()) {
    s += "<h2>Configuration differences between the runs</h2><table>";
    for (const auto& [key, value] : differences) s += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>";
    s += "</table>";
  }
  s += "<h2>Environment</h2><table>";
  for (const auto& [key, value] : environment_summary(m)) s += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>";
  s += "</table><h2>Bandwidth per case</h2>" + bandwidth_chart(m);
  for (const std::string& key : m.numeric_keys) s += "<h2>Bandwidth against " + html_escape(key) + "</h2>" + line_chart(m, key);
  const std::string wp = phase_chart(m, m.write_phases, true), rp = phase_chart(m, m.read_phases, false);
  if (!wp.empty()) s += "<h2>Checkpoint phases</h2>" + wp;
  if (!rp.empty()) s += "<h2>Restore phases</h2>" + rp;
  s += tables_html(m) + latency_table_html(m);
  s += "<p>Bandwidth: bytes_per_checkpoint / iteration seconds, GiB/s = 2<sup>30</sup> bytes/s; median [min–max] over the timed iterations.</p>";
  if (projection != nullptr) s += projection_section_html(*projection, "h2", "h3");
  return s + "</body></html>\n";
}

}  // namespace ckpt::harness
