#include "harness/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "harness/report/compression_table.hpp"
#include "harness/report/html_charts.hpp"
#include "harness/report/latency_table.hpp"
#include "harness/report/quantized_table.hpp"
#include "harness/report/recovery_table.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/request_table.hpp"
#include "harness/report/selective_table.hpp"
#include "harness/report/timeline_chart.hpp"
#include "harness/report/verdict.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kWriteColor = "#3b6fb6";
constexpr const char* kReadColor = "#e08a2c";
constexpr const char* kStallColor = "#e15759";
constexpr const char* kDurableColor = "#59a14f";

const std::vector<ChartSeries> kBandwidth{{"write", kWriteColor, &ReportRow::write},
                                          {"read", kReadColor, &ReportRow::read, true}};
const std::vector<ChartSeries> kTraining{
    {"stall", kStallColor, &ReportRow::stall},
    {"time to durable", kDurableColor, &ReportRow::durable, true}};
const std::vector<ChartSeries> kRestore{{"restore (load)", kReadColor, &ReportRow::read_seconds}};

// The text report's Markdown tables as HTML tables.
std::string tables_html(const ReportModel& m) {
  std::string s;
  const bool speedups = !m.options.baseline.empty();
  s += "<h2>Bandwidth</h2><table><tr><th>case</th><th>status</th><th>write GiB/s</th><th>read "
       "GiB/s</th>";
  if (speedups) s += "<th>write ×</th><th>read ×</th>";
  s += "</tr>";
  std::string group = "\x01";
  for (const ReportRow& r : m.rows) {
    if (!m.options.by.empty() && r.group != group) {
      s += fmt::format(R"(<tr><th colspan="{}" class="group">{} = {}</th></tr>)", speedups ? 6 : 4,
                       html_escape(m.options.by), html_escape(group = r.group));
    }
    s += fmt::format("<tr><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td>",
                     html_escape(r.name), html_escape(r.c->status),
                     html_escape(r.c->stores_data ? spread_text(r.write) : "—"),
                     html_escape(r.c->stores_data ? spread_text(r.read) : "—"));
    if (speedups)
      s += fmt::format("<td class=n>{}</td><td class=n>{}</td>",
                       html_escape(speedup_text(r.write_speedup)),
                       html_escape(speedup_text(r.read_speedup)));
    s += "</tr>";
  }
  s += "</table>";
  if (speedups)
    s += "<p>×: median bandwidth / the baseline's (" + html_escape(m.options.baseline) + ")</p>";
  s += "<h2>Phases (median seconds)</h2><table><tr><th>case</th>";
  for (const std::string& p : m.write_phases) s += "<th>write " + html_escape(p) + "</th>";
  for (const std::string& p : m.read_phases) s += "<th>read " + html_escape(p) + "</th>";
  if (m.has_stall) s += "<th>stall</th>";
  if (m.has_durable) s += "<th>time to durable</th>";
  s += "</tr>";
  const auto cell = [](const std::map<std::string, double>& v, const std::string& p) {
    return "<td class=n>" +
           (v.count(p) ? html_escape(format_significant(v.at(p))) : std::string("-")) + "</td>";
  };
  const std::size_t columns = 1 + m.write_phases.size() + m.read_phases.size() +
                              (m.has_stall ? 1 : 0) + (m.has_durable ? 1 : 0);
  group = "\x01";
  for (const ReportRow& r : m.rows) {
    if (!m.options.by.empty() && r.group != group) {
      s += fmt::format(R"(<tr><th colspan="{}" class="group">{} = {}</th></tr>)", columns,
                       html_escape(m.options.by), html_escape(group = r.group));
    }
    s += "<tr><td>" + html_escape(r.name) + "</td>";
    for (const std::string& p : m.write_phases) s += cell(r.c->write.phases, p);
    for (const std::string& p : m.read_phases) s += cell(r.c->read.phases, p);
    if (m.has_stall)
      s += "<td class=n>" + (r.c->stall_seconds ? format_significant(*r.c->stall_seconds) : "-") +
           "</td>";
    if (m.has_durable)
      s +=
          "<td class=n>" +
          (r.c->time_to_durable_seconds ? format_significant(*r.c->time_to_durable_seconds) : "-") +
          "</td>";
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
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows,
                       std::size_t text_columns) {
  std::string s = "<table><tr>";
  for (const std::string& h : header) s += "<th>" + html_escape(h) + "</th>";
  s += "</tr>";
  for (const auto& row : rows) {
    s += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      s += (i < text_columns ? "<td>" : "<td class=n>") + html_escape(row[i]) + "</td>";
    s += "</tr>";
  }
  return s + "</table>";
}

std::string html_style() {
  return "body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:"
         "8px 0}"
         "td,th{border:1px solid #ccc;padding:3px "
         "8px;font-size:13px}th{background:#f2f2f2}td.n{text-align:right;"
         "font-variant-numeric:tabular-nums}th.group{text-align:left;background:#e6eef8}svg{"
         "display:block;margin:8px 0}pre{white-space:pre-wrap}"
         "p.verdict{font-size:17px;line-height:1.45;max-width:62em;padding:10px "
         "14px;background:#f4f8fc;"
         "border-left:4px solid #3b6fb6}";
}

namespace {

// The charts of every measured quantity the cases have, each under its heading: per case, then
// against each numeric swept key.
std::string charts_html(const ReportModel& m) {
  std::string s;
  const auto section = [&s](const std::string& heading, const std::string& chart,
                            const std::string& note = "") {
    if (!chart.empty()) s += "<h2>" + html_escape(heading) + "</h2>" + chart + note;
  };
  section(
      "Stall and time to durable per checkpoint",
      bar_chart(m, kTraining, "seconds (median over the committed checkpoints, whiskers min–max)",
                "stall and time to durable per case", seconds_text),
      "<p>stall: what the training loop lost per checkpoint; time to durable: from the checkpoint "
      "being due to "
      "its manifest committed (the checkpoint survives a crash).</p>");
  section("Training loop timeline", timeline_chart(m),
          "<p>Each case's loop from its start: compute and update per iteration, the stalls a "
          "checkpoint causes, "
          "and the checkpoint's own steps (snapshot copy into the host pool; flush to storage; "
          "commit of the "
          "manifest). Hover for the times.</p>");
  section("Bandwidth per case", bar_chart(m, kBandwidth, "GiB/s (median, whiskers min–max)",
                                          "bandwidth per case", gib_per_s_text));
  section("Restore and load time per case",
          bar_chart(m, kRestore, "seconds (median, whiskers min–max)", "restore time per case",
                    seconds_text));
  for (const std::string& key : m.numeric_keys) {
    section("Bandwidth against " + key,
            line_chart(m, key, kBandwidth, "GiB/s (median)", gib_per_s_text));
    section("Stall and time to durable against " + key,
            line_chart(m, key, kTraining, "seconds (median)", seconds_text));
  }
  section("Checkpoint phases", phase_chart(m, m.write_phases, true));
  section("Restore phases", phase_chart(m, m.read_phases, false));
  section("Request latency percentiles", latency_chart(m));
  return s;
}

}  // namespace

std::string html_report(const ReportModel& m, const ProjectionModel* projection) {
  std::string title = "ckptbench report";
  for (const RunRecord& run : m.runs) title += " · " + run.name;
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                  html_escape(title) + "</title>";
  s += "<style>" + html_style() + "</style>";
  s += "</head><body><h1>" + html_escape(title) + "</h1>";
  if (const std::string answer = verdict(m); !answer.empty()) {
    s += "<h2>Summary</h2><p class=\"verdict\">" + html_escape(answer) + "</p>";
  }
  s += charts_html(m) + tables_html(m) + compression_table_html(m) + selective_table_html(m) +
       quantized_table_html(m) + request_table_html(m) + recovery_table_html(m) +
       latency_table_html(m);
  s += "<p>Bandwidth: bytes_per_checkpoint / iteration seconds, GiB/s = 2<sup>30</sup> bytes/s; "
       "median [min–max] over "
       "the timed iterations; the write of a [training] case is its flush bandwidth, median "
       "[min–max] over the committed "
       "checkpoints.</p>";
  if (projection != nullptr) s += projection_section_html(*projection, "h2", "h3");
  s += "<h2>Runs</h2><ul>";
  for (const RunRecord& run : m.runs) {
    s += fmt::format("<li>{}: {} cases ({})</li>", html_escape(run.name), run.cases.size(),
                     html_escape(run.file.string()));
  }
  s += "</ul>";
  const auto differences = config_differences(m);
  if (!differences.empty()) {
    s += "<h2>Configuration differences between the runs</h2><table>";
    for (const auto& [key, value] : differences)
      s += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>";
    s += "</table>";
  }
  s += "<h2>Environment</h2><table>";
  for (const auto& [key, value] : environment_summary(m))
    s += "<tr><th>" + html_escape(key) + "</th><td>" + html_escape(value) + "</td></tr>";
  s += "</table>";
  const auto warnings = case_integrity_warnings(m);
  if (!warnings.empty()) {
    s += "<h2 id=\"integrity\">Integrity warnings</h2><p>What may make a number better than the "
         "storage is (results.jsonl <code>integrity</code>).</p><table>";
    for (const auto& [name, warning] : warnings)
      s += "<tr><th>" + html_escape(name) + "</th><td>" + html_escape(warning) + "</td></tr>";
    s += "</table>";
  }
  return s + "</body></html>\n";
}

}  // namespace ckpt::harness
