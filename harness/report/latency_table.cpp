#include "harness/report/latency_table.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <array>
#include <vector>

#include "harness/report/html_report.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

constexpr std::array<const char*, 4> kColumns{"p50_seconds", "p99_seconds", "p999_seconds",
                                              "max_seconds"};

bool any_latency(const ReportModel& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const ReportRow& r) { return !r.c->latency.empty(); });
}

// Per row with latencies and per direction: case, direction, requests, p50, p99, p99.9, max.
std::vector<std::vector<std::string>> latency_rows(const ReportModel& m) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportRow& r : m.rows) {
    for (const char* direction : {"write", "read"}) {
      const auto it = r.c->latency.find(direction);
      if (it == r.c->latency.end()) continue;
      const auto& fields = it->second;
      const auto requests = fields.count("requests") ? fields.at("requests") : 0.0;
      std::vector<std::string> row{r.name, direction,
                                   fmt::format("{}", static_cast<long long>(requests))};
      for (const char* column : kColumns)
        row.push_back(fields.count(column) ? format_latency(fields.at(column)) : "-");
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

const std::vector<std::string> kLatencyHeader{"case", "phase", "requests", "p50",
                                              "p99",  "p99.9", "max"};

}  // namespace

std::string format_latency(double seconds) {
  if (seconds < 1e-3) return format_significant(seconds * 1e6) + " µs";
  if (seconds < 1) return format_significant(seconds * 1e3) + " ms";
  return format_significant(seconds) + " s";
}

void print_latency_table(const ReportModel& m, bool markdown, std::ostream& out) {
  if (!any_latency(m)) return;
  fmt::print(out,
             "\n{}Request latency (measure.latency: every request of the timed iterations, all "
             "processes)\n\n",
             markdown ? "## " : "");
  Table table(kLatencyHeader, {false, false, true, true, true, true, true});
  for (auto& row : latency_rows(m)) table.add(std::move(row));
  table.print(out, markdown);
  fmt::print(
      out,
      "\npercentiles: the upper bound of a log-linear bucket, at most 1.6% above the true value\n");
}

std::string latency_table_html(const ReportModel& m) {
  if (!any_latency(m)) return "";
  return "<h2>Request latency</h2>" + html_table(kLatencyHeader, latency_rows(m), 2) +
         "<p>measure.latency: every request of the timed iterations, all processes; "
         "percentiles are the upper "
         "bound of a log-linear bucket, at most 1.6% above the true value.</p>";
}

}  // namespace ckpt::harness
