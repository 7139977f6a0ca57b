#include "harness/report/compression_table.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "harness/common/text_format.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

bool any_compression(const ReportModel& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const ReportRow& r) { return r.c->compression.has_value(); });
}

// "0.412 s (CPU 0.8 s)", "-" when the case ran no such step.
std::string codec_time(const std::optional<double>& wall, const std::optional<double>& cpu) {
  if (!wall) return "-";
  return fmt::format("{} s (CPU {} s)", format_significant(*wall),
                     format_significant(cpu.value_or(0.0)));
}

// Per compressed row: case, codec, logical, stored, ratio, saved, encode, decode.
std::vector<std::vector<std::string>> compression_rows(const ReportModel& m) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportRow& r : m.rows) {
    if (!r.c->compression) continue;
    const CompressionRecord& z = *r.c->compression;
    const bool stored = z.stored_bytes > 0;
    const double logical = static_cast<double>(z.logical_bytes);
    const double frames = static_cast<double>(z.stored_bytes);
    rows.push_back(
        {r.name, fmt::format("{} level {} per {}, {} threads", z.codec, z.level, z.unit, z.threads),
         format_bytes(static_cast<std::int64_t>(z.logical_bytes)),
         stored ? format_bytes(static_cast<std::int64_t>(z.stored_bytes)) : "-",
         stored ? fmt::format("{:.2f}×", logical / frames) : "-",
         stored && logical > 0 ? fmt::format("{:.1f}%", 100.0 * (1.0 - frames / logical)) : "-",
         codec_time(z.encode_seconds, z.encode_cpu_seconds),
         codec_time(z.decode_seconds, z.decode_cpu_seconds)});
  }
  return rows;
}

const std::vector<std::string> kCompressionHeader{"case",  "codec", "logical", "stored",
                                                  "ratio", "saved", "encode",  "decode"};

constexpr const char* kNote =
    "logical: the bytes one checkpoint's pieces decode to; stored: their frames (a load: the "
    "pieces it read); ratio = logical / stored; encode, decode: median wall seconds of the "
    "slowest process per checkpoint or restore (CPU: every codec thread's, all processes)";

}  // namespace

void print_compression_table(const ReportModel& m, bool markdown, std::ostream& out) {
  if (!any_compression(m)) return;
  fmt::print(out, "\n{}Compression (strategy.compression)\n\n", markdown ? "## " : "");
  Table table(kCompressionHeader, {false, false, true, true, true, true, true, true});
  for (auto& row : compression_rows(m)) table.add(std::move(row));
  table.print(out, markdown);
  fmt::print(out, "\n{}\n", kNote);
}

std::string compression_table_html(const ReportModel& m) {
  if (!any_compression(m)) return "";
  return "<h2>Compression</h2>" + html_table(kCompressionHeader, compression_rows(m), 2) + "<p>" +
         html_escape(kNote) + ".</p>";
}

}  // namespace ckpt::harness
