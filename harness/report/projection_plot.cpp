#include "harness/report/projection_plot.hpp"

#include "harness/report/html_report.hpp"
#include "harness/report/projection.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {

std::string waste_axes(const WastePlot& p, const std::string& x_title) {
  std::string s =
      fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)",
                  svg_number(p.x0), svg_number(p.y0), svg_number(p.w), svg_number(p.h));
  for (int k = 0; k <= 4; ++k) {
    const double pct = p.top * k / 4;
    s += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#eee"/><text x="{3}" y="{4}" font-size="11" text-anchor="end">{5}%</text>)",
        svg_number(p.x0), svg_number(p.py(pct)), svg_number(p.x0 + p.w), svg_number(p.x0 - 4),
        svg_number(p.py(pct) + 4), html_escape(format_significant(pct)));
  }
  for (double tick : {0.001, 0.01, 0.1, 1.0, 10.0, 60.0, 600.0, 3600.0, 21600.0, 86400.0, 604800.0,
                      6048000.0, 31557600.0}) {
    if (tick < p.lo || tick > p.hi) continue;
    s += fmt::format(
        R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#eee"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>)",
        svg_number(p.px(tick)), svg_number(p.y0), svg_number(p.y0 + p.h),
        svg_number(p.y0 + p.h + 14), html_escape(format_interval(tick)));
  }
  s += fmt::format(R"(<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>)",
                   svg_number(p.x0 + p.w / 2), svg_number(p.y0 + p.h + 34), html_escape(x_title));
  return s +
         fmt::format(
             R"svg(<text x="14" y="{0}" font-size="12" transform="rotate(-90 14 {0})" text-anchor="middle">waste (% of training time)</text>)svg",
             svg_number(p.y0 + p.h / 2));
}

std::string curve_legend(const WastePlot& p, double y, const char* color, const char* dash,
                         const std::string& name) {
  return fmt::format(
      R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="2"{}/><text x="{}" y="{}" font-size="11">{}</text>)",
      svg_number(p.x0 + p.w + 8), svg_number(y - 4), svg_number(p.x0 + p.w + 26), svg_number(y - 4),
      color, dash, svg_number(p.x0 + p.w + 30), svg_number(y), html_escape(name));
}

}  // namespace ckpt::harness
