#include "harness/report/html_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/report/html_report.hpp"
#include "harness/report/latency_table.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kPhaseColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                        "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr double kPlotWidth = 560;
constexpr double kValueRoom = 90;  // right of the bars: the largest bar's value label

// A swept value as the axis shows it: integers (threads, bytes) without decimals.
std::string value_label(double v) {
  return v == std::floor(v) && std::abs(v) < 1e15 ? fmt::format("{}", static_cast<long long>(v))
                                                  : format_significant(v);
}

std::string svg_open(double width, double height, const std::string& aria) {
  return fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="{}">)",
      svg_number(width), svg_number(height), html_escape(aria));
}

// Vertical grid lines and labels at round values from 0 to `top` under a plot of `height`.
std::string axis_x(double lw, double top, double y0, double height, const std::string& unit) {
  std::string s;
  const double step = nice_step(top, 5);
  for (double t = 0; t <= top * 1.0001; t += step) {
    const double x = lw + t / top * kPlotWidth;
    s += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>)",
        svg_number(x), svg_number(y0), svg_number(y0 + height), svg_number(y0 + height + 14),
        html_escape(format_significant(t)));
  }
  s +=
      fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)",
                  svg_number(lw + kPlotWidth / 2), svg_number(y0 + height + 30), html_escape(unit));
  return s;
}

bool has_any(const ReportRow& r, const std::vector<ChartSeries>& series) {
  return std::any_of(series.begin(), series.end(),
                     [&](const ChartSeries& c) { return (r.*c.stats).n > 0; });
}

// One bar with its whisker and its value at (lw, y), `px` mapping values to x.
template <typename Px>
std::string bar(const ReportRow& r, const ChartSeries& c, double lw, double y, Px px,
                ValueText text) {
  const SampleStats& st = r.*c.stats;
  std::string s = fmt::format(
      R"(<rect x="{}" y="{}" width="{}" height="11" fill="{}"><title>{}</title></rect>)",
      svg_number(lw), svg_number(y), svg_number(px(st.median) - lw), c.color,
      html_escape(fmt::format("{} {}: {}", r.full_name, c.name, text(st.median))));
  if (st.n > 1) {
    s += fmt::format(
        R"(<line x1="{0}" y1="{2}" x2="{1}" y2="{2}" stroke="#222"/><line x1="{0}" y1="{3}" x2="{0}" y2="{4}" stroke="#222"/><line x1="{1}" y1="{3}" x2="{1}" y2="{4}" stroke="#222"/>)",
        svg_number(px(st.min)), svg_number(px(st.max)), svg_number(y + 5.5), svg_number(y + 2),
        svg_number(y + 9));
  }
  return s + fmt::format(R"(<text x="{}" y="{}" font-size="10" class="value">{}</text>)",
                         svg_number(px(std::max(st.median, st.max)) + 4), svg_number(y + 9.5),
                         html_escape(text(st.median)));
}

// The points of a line chart: (setting of the other keys, series) -> (key value, median).
struct LineSeries {
  std::map<std::pair<std::string, std::size_t>, std::vector<std::pair<double, double>>> series;
  double xmin = 1e300, xmax = -1e300, top = 0;
};

LineSeries line_series(const ReportModel& m, const std::string& key,
                       const std::vector<ChartSeries>& measures) {
  LineSeries l;
  for (const ReportRow& r : m.rows) {
    const auto x = r.c->number_of(key);
    if (!x || !has_any(r, measures)) continue;
    nlohmann::json rest = r.c->swept;
    rest.erase(key);
    const std::string name =
        (m.runs.size() > 1 ? r.c->run + ": " : "") + (rest.empty() ? "" : swept_label(rest) + " ");
    for (std::size_t i = 0; i < measures.size(); ++i) {
      const SampleStats& st = r.*measures[i].stats;
      if (st.n == 0) continue;
      l.series[{name, i}].emplace_back(*x, st.median);
      l.top = std::max(l.top, st.median);
    }
    l.xmin = std::min(l.xmin, *x), l.xmax = std::max(l.xmax, *x);
  }
  return l;
}

}  // namespace

std::string svg_number(double v) {
  return fmt::format("{:.1f}", v);
}

std::string gib_per_s_text(double value) {
  return format_significant(value) + " GiB/s";
}
std::string seconds_text(double seconds) {
  return format_latency(seconds);
}

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

double legend_entry(std::string& s, double x, double y, const std::string& name,
                    const char* color) {
  s += fmt::format(
      R"(<rect x="{}" y="{}" width="12" height="10" fill="{}"/><text x="{}" y="{}" font-size="11">{}</text>)",
      svg_number(x), svg_number(y), color, svg_number(x + 16), svg_number(y + 9),
      html_escape(name));
  return 28 + 6.5 * static_cast<double>(display_width(name));
}

std::string bar_chart(const ReportModel& m, const std::vector<ChartSeries>& series,
                      const std::string& axis, const std::string& aria, ValueText text) {
  double top = 0;
  std::vector<const ReportRow*> rows;
  for (const ReportRow& r : m.rows) {
    if (!has_any(r, series)) continue;
    rows.push_back(&r);
    for (const ChartSeries& c : series)
      top = std::max({top, (r.*c.stats).max, (r.*c.stats).median});
  }
  top *= 1.05;
  if (rows.empty() || !(top > 0) || !std::isfinite(top)) return "";
  const double lw = label_width(m);
  const double row_height = 8 + 13 * static_cast<double>(series.size()), y0 = 24;
  const double height = row_height * static_cast<double>(rows.size());
  std::string s = svg_open(lw + kPlotWidth + kValueRoom, y0 + height + 40, aria);
  double lx = lw;
  for (const ChartSeries& c : series) lx += legend_entry(s, lx, 4, c.name, c.color);
  s += axis_x(lw, top, y0, height, axis);
  const auto px = [&](double v) { return lw + v / top * kPlotWidth; };
  double y = y0;
  for (const ReportRow* r : rows) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)",
                     svg_number(lw - 6), svg_number(y + row_height / 2 + 4),
                     html_escape(r->full_name));
    for (std::size_t k = 0; k < series.size(); ++k) {
      if ((r->*series[k].stats).n > 0)
        s += bar(*r, series[k], lw, y + 4 + 13 * static_cast<double>(k), px, text);
    }
    y += row_height;
  }
  return s + "</svg>";
}

namespace {

// A line chart's plot: the key's values on x (logarithmic when they span 16× or more), the
// medians on y from 0 to `top`.
struct LinePlot {
  double xmin, xmax, top;
  bool log_x;
  double x0 = 70, w = 640, y0 = 20, h = 260;
  double px(double v) const {
    const double f =
        log_x ? std::log(v / xmin) / std::log(xmax / xmin) : (v - xmin) / (xmax - xmin);
    return x0 + f * w;
  }
  double py(double v) const { return y0 + h - v / top * h; }
};

// The frame, the y grid, a label at every key value that has a point, and both axis titles.
std::string line_axes(const LinePlot& p, const std::vector<double>& xs, const std::string& key,
                      const std::string& axis) {
  std::string s =
      fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)",
                  svg_number(p.x0), svg_number(p.y0), svg_number(p.w), svg_number(p.h));
  for (double t = 0, step = nice_step(p.top, 5); t <= p.top; t += step) {
    s += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#eee"/><text x="{3}" y="{4}" font-size="11" text-anchor="end">{5}</text>)",
        svg_number(p.x0), svg_number(p.py(t)), svg_number(p.x0 + p.w), svg_number(p.x0 - 4),
        svg_number(p.py(t) + 4), html_escape(format_significant(t)));
  }
  for (double x : xs) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>)",
                     svg_number(p.px(x)), svg_number(p.y0 + p.h + 14), html_escape(value_label(x)));
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}{}</text>)",
                   svg_number(p.x0 + p.w / 2), svg_number(p.y0 + p.h + 34), html_escape(key),
                   p.log_x ? " (log scale)" : "");
  return s +
         fmt::format(
             R"svg(<text x="14" y="{0}" font-size="12" transform="rotate(-90 14 {0})" text-anchor="middle">{1}</text>)svg",
             svg_number(p.y0 + p.h / 2), html_escape(axis));
}

// One series: its line, a titled point per key value, and its legend entry (the `index`-th).
std::string line_of(const LinePlot& p, const std::string& name,
                    const std::vector<std::pair<double, double>>& points, const char* color,
                    bool dashed, std::size_t index, const std::string& key, ValueText text) {
  const char* dash = dashed ? R"( stroke-dasharray="6 4")" : "";
  std::string path;
  for (const auto& [x, v] : points) {
    path +=
        fmt::format("{}{},{} ", path.empty() ? "M" : "L", svg_number(p.px(x)), svg_number(p.py(v)));
  }
  std::string s = fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="2"{}/>)", path,
                              color, dash);
  for (const auto& [x, v] : points) {
    s += fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="{}"><title>{}</title></circle>)",
                     svg_number(p.px(x)), svg_number(p.py(v)), color,
                     html_escape(fmt::format("{} {}={}: {}", name, key, value_label(x), text(v))));
  }
  const double ly = p.y0 + 10 + 16 * static_cast<double>(index);
  return s +
         fmt::format(
             R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"{}/><text x="{}" y="{}" font-size="11">{}</text>)",
             svg_number(p.x0 + p.w + 8), svg_number(ly - 4), svg_number(p.x0 + p.w + 26),
             svg_number(ly - 4), color, dash, svg_number(p.x0 + p.w + 30), svg_number(ly),
             html_escape(name));
}

}  // namespace

std::string line_chart(const ReportModel& m, const std::string& key,
                       const std::vector<ChartSeries>& measures, const std::string& axis,
                       ValueText text) {
  LineSeries l = line_series(m, key, measures);
  if (l.series.empty() || !(l.xmax > l.xmin) || !(l.top > 0) || !std::isfinite(l.top * 1.1))
    return "";
  const LinePlot plot{l.xmin, l.xmax, l.top * 1.1, l.xmin > 0 && l.xmax / l.xmin >= 16};
  std::vector<double> xs;
  for (const auto& [id, points] : l.series) {
    for (const auto& point : points) xs.push_back(point.first);
  }
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::string s = svg_open(plot.x0 + plot.w + 260, plot.y0 + plot.h + 50, axis + " against " + key);
  s += line_axes(plot, xs, key, axis);
  std::size_t i = 0;
  std::map<std::string, std::size_t> colors;  // one colour per setting; the series differ by dashes
  for (auto& [id, points] : l.series) {
    std::sort(points.begin(), points.end());
    const ChartSeries& measure = measures[id.second];
    const std::size_t colour = colors.emplace(id.first, colors.size()).first->second;
    s += line_of(plot, id.first + measure.name, points,
                 kPhaseColors[colour % std::size(kPhaseColors)], measure.dashed, i++, key, text);
  }
  return s + "</svg>";
}

std::string phase_chart(const ReportModel& m, const std::vector<std::string>& phases, bool write) {
  if (phases.empty()) return "";
  double top = 0;
  for (const ReportRow& r : m.rows) {
    double sum = 0;
    for (const auto& [name, seconds] : (write ? r.c->write : r.c->read).phases) sum += seconds;
    top = std::max(top, sum);
  }
  top *= 1.05;
  if (!(top > 0) || !std::isfinite(top)) return "";
  const double lw = label_width(m);
  const double row_height = 22, y0 = 24;
  const double height = row_height * static_cast<double>(m.rows.size());
  std::string s = svg_open(lw + kPlotWidth + kValueRoom, y0 + height + 40,
                           write ? "checkpoint phases" : "restore phases");
  double lx = lw;
  for (std::size_t i = 0; i < phases.size(); ++i)
    lx += legend_entry(s, lx, 4, phases[i], kPhaseColors[i % std::size(kPhaseColors)]);
  s += axis_x(lw, top, y0, height, "seconds (median per phase, stacked)");
  double y = y0;
  for (const ReportRow& r : m.rows) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)",
                     svg_number(lw - 6), svg_number(y + 15), html_escape(r.full_name));
    double x = lw;
    const auto& values = (write ? r.c->write : r.c->read).phases;
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const auto it = values.find(phases[i]);
      if (it == values.end()) continue;
      const double w = it->second / top * kPlotWidth;
      s += fmt::format(
          R"(<rect x="{}" y="{}" width="{}" height="16" fill="{}"><title>{}</title></rect>)",
          svg_number(x), svg_number(y + 3), fmt::format("{:.2f}", w),
          kPhaseColors[i % std::size(kPhaseColors)],
          html_escape(
              fmt::format("{} {}: {} s", r.full_name, phases[i], format_significant(it->second))));
      x += w;
    }
    y += row_height;
  }
  return s + "</svg>";
}

std::string latency_chart(const ReportModel& m) {
  static constexpr std::pair<const char*, const char*> kMarks[] = {{"p50_seconds", "p50"},
                                                                   {"p99_seconds", "p99"},
                                                                   {"p999_seconds", "p99.9"},
                                                                   {"max_seconds", "max"}};
  std::vector<std::pair<std::string, const std::map<std::string, double>*>>
      lines;  // "case write", its fields
  double lo = 1e300, hi = 0;
  for (const ReportRow& r : m.rows) {
    for (const auto& [direction, fields] : r.c->latency) {
      lines.emplace_back(r.full_name + " " + direction, &fields);
      for (const auto& [field, label] : kMarks) {
        if (!fields.count(field) || !(fields.at(field) > 0)) continue;
        lo = std::min(lo, fields.at(field)), hi = std::max(hi, fields.at(field));
      }
    }
  }
  if (lines.empty() || !(hi > 0)) return "";
  lo = std::pow(10, std::floor(std::log10(lo))), hi = std::pow(10, std::ceil(std::log10(hi)));
  if (!(hi > lo)) hi = lo * 10;
  const double lw = label_width(m) + 50, y0 = 24, row_height = 20;
  const double height = row_height * static_cast<double>(lines.size());
  const auto px = [&](double v) { return lw + std::log(v / lo) / std::log(hi / lo) * kPlotWidth; };
  std::string s =
      svg_open(lw + kPlotWidth + kValueRoom, y0 + height + 40, "request latency percentiles");
  double lx = lw;
  for (std::size_t k = 0; k < std::size(kMarks); ++k)
    lx += legend_entry(s, lx, 4, kMarks[k].second, kPhaseColors[k]);
  for (double t = lo; t <= hi * 1.0001; t *= 10) {
    s += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>)",
        svg_number(px(t)), svg_number(y0), svg_number(y0 + height), svg_number(y0 + height + 14),
        html_escape(format_latency(t)));
  }
  s += fmt::format(
      R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">request latency (log scale)</text>)",
      svg_number(lw + kPlotWidth / 2), svg_number(y0 + height + 30));
  double y = y0;
  for (const auto& [name, fields] : lines) {
    s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="end">{}</text>)",
                     svg_number(lw - 6), svg_number(y + 14), html_escape(name));
    for (std::size_t k = 0; k < std::size(kMarks); ++k) {
      const auto it = fields->find(kMarks[k].first);
      if (it == fields->end() || !(it->second > 0)) continue;
      s += fmt::format(
          R"(<circle cx="{}" cy="{}" r="4.5" fill="{}"><title>{} {}: {}</title></circle>)",
          svg_number(px(it->second)), svg_number(y + 10), kPhaseColors[k], html_escape(name),
          kMarks[k].second, html_escape(format_latency(it->second)));
    }
    y += row_height;
  }
  return s + "</svg>";
}

}  // namespace ckpt::harness
