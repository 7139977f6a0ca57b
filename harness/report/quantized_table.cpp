#include "harness/report/quantized_table.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "harness/common/text_format.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

bool any_quantized(const ReportModel& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const ReportRow& r) { return r.c->quantized.has_value(); });
}

std::vector<std::vector<std::string>> quantized_rows(const ReportModel& m) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportRow& r : m.rows) {
    if (!r.c->quantized) continue;
    const QuantizedRecord& q = *r.c->quantized;
    const std::uint64_t saved = q.unquantized_bytes > q.bytes ? q.unquantized_bytes - q.bytes : 0;
    rows.push_back({r.name, q.format, format_bytes(static_cast<std::int64_t>(q.bytes)),
                    format_bytes(static_cast<std::int64_t>(q.unquantized_bytes)),
                    format_bytes(static_cast<std::int64_t>(saved)),
                    q.unquantized_bytes == 0
                        ? "-"
                        : fmt::format("{:.1f}%", 100.0 * static_cast<double>(saved) /
                                                     static_cast<double>(q.unquantized_bytes))});
  }
  return rows;
}

const std::vector<std::string> kQuantizedHeader{"case",        "weights", "checkpoint",
                                                "unquantized", "saved",   "saved %"};

constexpr const char* kQuantizedNote =
    "checkpoint: the bytes of one checkpoint with quantized weights, their scale tensors "
    "included; unquantized: the same checkpoint with every weight in state.weight_dtype";

}  // namespace

void print_quantized_table(const ReportModel& m, bool markdown, std::ostream& out) {
  if (!any_quantized(m)) return;
  fmt::print(out, "\n{}Quantized weights (model.weights)\n\n", markdown ? "## " : "");
  Table table(kQuantizedHeader, {false, false, true, true, true, true});
  for (auto& row : quantized_rows(m)) table.add(std::move(row));
  table.print(out, markdown);
  fmt::print(out, "\n{}\n", kQuantizedNote);
}

std::string quantized_table_html(const ReportModel& m) {
  if (!any_quantized(m)) return "";
  return "<h2>Quantized weights</h2>" + html_table(kQuantizedHeader, quantized_rows(m), 2) + "<p>" +
         html_escape(kQuantizedNote) + ".</p>";
}

}  // namespace ckpt::harness
