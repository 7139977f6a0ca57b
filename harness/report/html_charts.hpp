#pragma once

// The report's inline SVG charts, drawn from the report model: no script, no fetched font.

#include <string>
#include <vector>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// One measured quantity of the rows as a chart draws it.
struct ChartSeries {
  std::string name;  // the legend's: "write", "stall"
  const char* color;
  SampleStats ReportRow::*stats;
  bool dashed = false;  // line charts: drawn dashed (the read beside the write)
};

// How a chart's values are written: "1.23 GiB/s", "525 ms".
using ValueText = std::string (*)(double);
std::string gib_per_s_text(double value);
std::string seconds_text(double seconds);

// Horizontal bars, per row with a value a bar per series (the median, labelled) with a min–max
// whisker; rows without any are left out. "" when no row has a value.
std::string bar_chart(const ReportModel& model, const std::vector<ChartSeries>& series,
                      const std::string& axis, const std::string& aria, ValueText text);

// The medians against the numeric swept `key`: a line per series and per setting of the other
// swept keys (and run). "" when fewer than two key values have one.
std::string line_chart(const ReportModel& model, const std::string& key,
                       const std::vector<ChartSeries>& series, const std::string& axis,
                       ValueText text);

// Per row a stacked bar of the checkpoint's (write) or restore's phase medians.
std::string phase_chart(const ReportModel& model, const std::vector<std::string>& phases,
                        bool write);

// measure.latency: per row and direction p50, p99, p99.9 and max on a log axis ("" without any).
std::string latency_chart(const ReportModel& model);

// Shared by the charts: a coordinate as SVG writes it, the room for the longest row name left of
// the bars, and a round tick step for about `ticks` ticks up to `top`.
std::string svg_number(double v);
double label_width(const ReportModel& model);
double nice_step(double top, int ticks);
// A legend entry at (x, y): a swatch and its name; returns the entry's width.
double legend_entry(std::string& svg, double x, double y, const std::string& name,
                    const char* color);

}  // namespace ckpt::harness
