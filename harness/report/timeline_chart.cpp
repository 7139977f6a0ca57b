#include "harness/report/timeline_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "harness/report/html_charts.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kComputeColor = "#c6dbef";
constexpr const char* kUpdateColor = "#9ecb8f";
constexpr const char* kStallColor = "#e15759";
constexpr const char* kSnapshotColor = "#f28e2b";
constexpr const char* kFlushColor = "#4e79a7";
constexpr const char* kCommitColor = "#b07aa1";
constexpr const char* kDurableColor = "#222";
constexpr double kPlotWidth = 760;
constexpr double kLane = 13, kLaneGap = 3, kCaseGap = 14, kNameHeight = 16;

std::string at_text(double t) {
  return format_significant(t) + " s";
}

// The part of a case that is drawn: its first kTimelineIterations iterations and the
// checkpoints of their states (each due at the end of its iteration).
struct Lanes {
  const ReportRow* row = nullptr;
  std::vector<LoopIteration> iterations;
  std::vector<LoopCheckpoint> checkpoints;
  std::size_t total_iterations = 0;
  double end = 0;  // the last thing drawn ends here
};

Lanes lanes_of(const ReportRow& r) {
  const TrainingRecord& t = *r.c->training;
  Lanes l{.row = &r, .total_iterations = t.iterations.size()};
  l.iterations.assign(t.iterations.begin(),
                      t.iterations.begin() + std::min(t.iterations.size(), kTimelineIterations));
  l.end = l.iterations.back().end;
  for (const LoopCheckpoint& c : t.checkpoints) {
    if (!c.timed || c.iteration < 0 || static_cast<std::size_t>(c.iteration) >= l.iterations.size())
      continue;
    l.checkpoints.push_back(c);
    l.end = std::max(l.end, c.resumed);
    for (const auto& span : {c.snapshot, c.flush, c.commit}) {
      if (span) l.end = std::max(l.end, span->end);
    }
  }
  return l;
}

class TimelineSvg {
 public:
  TimelineSvg(double lw, double top) : lw_(lw), top_(top) {}
  double x(double t) const { return lw_ + std::min(t, top_) / top_ * kPlotWidth; }
  void span(double y, double start, double end, const char* color, const std::string& title) {
    if (!(end > start) || start > top_) return;
    s_ += fmt::format(
        R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="#fff" stroke-width="0.5"><title>{}</title></rect>)",
        svg_number(x(start)), svg_number(y),
        fmt::format("{:.2f}", std::max(0.6, x(end) - x(start))), svg_number(kLane), color,
        html_escape(title));
  }
  // A vertical mark across `lanes` lanes from y: the due point (thin) or the durable point (thick,
  // with a diamond).
  void mark(double y, double t, bool durable, const std::string& title) {
    if (t > top_) return;
    const double h = 3 * kLane + 2 * kLaneGap;
    s_ += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="{3}" stroke-width="{4}"{5}><title>{6}</title></line>)",
        svg_number(x(t)), svg_number(y - 2), svg_number(y + h + 2), kDurableColor,
        durable ? 1.5 : 1, durable ? "" : R"( stroke-dasharray="2 2")", html_escape(title));
    if (durable) {
      s_ += fmt::format(
          R"(<path d="M{0},{1} l4,4 l-4,4 l-4,-4 z" fill="{2}"><title>{3}</title></path>)",
          svg_number(x(t)), svg_number(y + h - 2), kDurableColor, html_escape(title));
    }
  }
  void text(const std::string& svg) { s_ += svg; }
  const std::string& svg() const { return s_; }

 private:
  double lw_, top_;
  std::string s_;
};

void draw_iterations(TimelineSvg& svg, const Lanes& l, double y) {
  for (std::size_t i = 0; i < l.iterations.size(); ++i) {
    const LoopIteration& it = l.iterations[i];
    svg.span(y, it.start, it.compute_end, kComputeColor,
             fmt::format("iteration {}: compute {} to {}", i, at_text(it.start),
                         at_text(it.compute_end)));
    svg.span(y, it.compute_end, it.update_start, kStallColor,
             fmt::format("iteration {}: stall {} waiting for the snapshot copy before the update",
                         i, seconds_text(it.update_start - it.compute_end)));
    svg.span(
        y, it.update_start, it.end, kUpdateColor,
        fmt::format("iteration {}: update {} to {}", i, at_text(it.update_start), at_text(it.end)));
  }
}

void draw_checkpoints(TimelineSvg& svg, const Lanes& l, double y) {
  for (const LoopCheckpoint& c : l.checkpoints) {
    const std::string name = fmt::format("checkpoint of iteration {}", c.iteration);
    svg.span(y, c.due, c.resumed, kStallColor,
             fmt::format("{}: stall {} (due {}, resumed {})", name, seconds_text(c.resumed - c.due),
                         at_text(c.due), at_text(c.resumed)));
    const double step_y = y + kLane + kLaneGap;
    if (c.snapshot) {
      svg.span(step_y, c.snapshot->start, c.snapshot->end, kSnapshotColor,
               fmt::format("{}: snapshot copy {} ({} to {})", name,
                           seconds_text(c.snapshot->end - c.snapshot->start),
                           at_text(c.snapshot->start), at_text(c.snapshot->end)));
    }
    const double flush_y = step_y + kLane + kLaneGap;
    if (c.flush) {
      svg.span(
          flush_y, c.flush->start, c.flush->end, kFlushColor,
          fmt::format("{}: flush {} ({} to {})", name, seconds_text(c.flush->end - c.flush->start),
                      at_text(c.flush->start), at_text(c.flush->end)));
    }
    if (c.commit) {
      svg.span(flush_y, c.commit->start, c.commit->end, kCommitColor,
               fmt::format("{}: commit {} ({} to {})", name,
                           seconds_text(c.commit->end - c.commit->start), at_text(c.commit->start),
                           at_text(c.commit->end)));
    }
    svg.mark(y, c.due, false, fmt::format("{}: due at {}", name, at_text(c.due)));
    if (c.committed) {
      svg.mark(y, c.due + c.time_to_durable_seconds, true,
               fmt::format("{}: durable at {}, {} after it was due", name,
                           at_text(c.due + c.time_to_durable_seconds),
                           seconds_text(c.time_to_durable_seconds)));
    }
  }
}

std::string lane_labels(double lw, double y) {
  std::string s;
  const char* names[] = {"loop", "snapshot", "flush, commit"};
  for (const char* name : names) {
    s +=
        fmt::format(R"(<text x="{}" y="{}" font-size="10" fill="#555" text-anchor="end">{}</text>)",
                    svg_number(lw - 6), svg_number(y + 10), name);
    y += kLane + kLaneGap;
  }
  return s;
}

std::string legend(double lw) {
  std::string s;
  double x = lw;
  for (const auto& [name, color] : {std::pair{"compute", kComputeColor},
                                    {"update", kUpdateColor},
                                    {"stall", kStallColor},
                                    {"snapshot copy", kSnapshotColor},
                                    {"flush", kFlushColor},
                                    {"commit", kCommitColor}}) {
    x += legend_entry(s, x, 4, name, color);
  }
  return s +
         fmt::format(R"(<text x="{}" y="13" font-size="11">dashed line: due · ◆: durable</text>)",
                     svg_number(x));
}

}  // namespace

std::string timeline_chart(const ReportModel& m) {
  std::vector<Lanes> cases;
  double top = 0;
  for (const ReportRow& r : m.rows) {
    if (!r.c->training || !r.c->training->has_timeline()) continue;
    cases.push_back(lanes_of(r));
    top = std::max(top, cases.back().end);
  }
  top *= 1.02;
  if (cases.empty() || !(top > 0) || !std::isfinite(top)) return "";
  const double lw = std::max(label_width(m) - 30, 100.0), y0 = 24;
  const double block = kNameHeight + 3 * kLane + 2 * kLaneGap + kCaseGap;
  const double height = block * static_cast<double>(cases.size());
  TimelineSvg svg(lw, top);
  svg.text(fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" role="img" aria-label="training loop timeline">)",
      svg_number(lw + kPlotWidth + 20), svg_number(y0 + height + 36)));
  svg.text(legend(lw));
  for (double t = 0, step = nice_step(top, 8); t <= top * 1.0001; t += step) {
    svg.text(fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#eee"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>)",
        svg_number(svg.x(t)), svg_number(y0), svg_number(y0 + height), svg_number(y0 + height + 14),
        format_significant(t)));
  }
  svg.text(fmt::format(
      R"(<text x="{}" y="{}" font-size="11" text-anchor="middle">seconds from the loop's start (process 0's clock)</text>)",
      svg_number(lw + kPlotWidth / 2), svg_number(y0 + height + 30)));
  double y = y0;
  for (const Lanes& l : cases) {
    std::string name =
        l.row->full_name + (l.row->c->engine.empty() ? "" : " (" + l.row->c->engine + ")");
    if (l.total_iterations > l.iterations.size())
      name += fmt::format(" — first {} of {} iterations", l.iterations.size(), l.total_iterations);
    svg.text(fmt::format(R"(<text x="{}" y="{}" font-size="12" font-weight="bold">{}</text>)",
                         svg_number(lw), svg_number(y + 12), html_escape(name)));
    const double lanes_y = y + kNameHeight;
    svg.text(lane_labels(lw, lanes_y));
    draw_iterations(svg, l, lanes_y);
    draw_checkpoints(svg, l, lanes_y);
    y += block;
  }
  return svg.svg() + "</svg>";
}

}  // namespace ckpt::harness
