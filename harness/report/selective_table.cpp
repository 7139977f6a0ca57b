#include "harness/report/selective_table.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <vector>

#include "harness/common/text_format.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

bool any_selective(const ReportModel& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const ReportRow& r) { return r.c->selective.has_value(); });
}

// Each timed checkpoint's written bytes as a share of a full one ("100% 5% 9%"), the first
// kMaxShares of them.
constexpr std::size_t kMaxShares = 10;
std::string written_shares(const SelectiveRecord& z) {
  if (z.written_bytes.empty() || z.full_bytes == 0) return "-";
  std::string out;
  for (std::size_t i = 0; i < std::min(z.written_bytes.size(), kMaxShares); ++i)
    out += fmt::format(
        "{}{:.0f}%", i == 0 ? "" : " ",
        100.0 * static_cast<double>(z.written_bytes[i]) / static_cast<double>(z.full_bytes));
  return z.written_bytes.size() > kMaxShares ? out + " ..." : out;
}

// A restore's chain length and read amplification ("5, 1.18x"), or its longest chain in a write.
std::string chain_text(const SelectiveRecord& z) {
  if (!z.restored.empty() && z.restore_chain_length > 0)
    return z.amplification
               ? fmt::format("{}, read {:.2f}x", z.restore_chain_length, *z.amplification)
               : std::to_string(z.restore_chain_length);
  if (z.chain_length.empty()) return "-";
  return std::to_string(*std::max_element(z.chain_length.begin(), z.chain_length.end()));
}

// Per rotating row: case, rotation, full, written, saved, per checkpoint, chain, oldest needed,
// restore read.
std::vector<std::vector<std::string>> selective_rows(const ReportModel& m) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportRow& r : m.rows) {
    if (!r.c->selective) continue;
    const SelectiveRecord& z = *r.c->selective;
    const std::string rotation = z.experts > 0 ? fmt::format("{} experts per checkpoint", z.experts)
                                 : z.delta_every > 1
                                     ? fmt::format("delta, full every {}", z.delta_every)
                                     : fmt::format("layers, every {}", z.every);
    std::string written = "-", saved = "-", oldest = "-", read = "-";
    if (!z.written_bytes.empty()) {
      const double bytes =
          median(std::vector<double>(z.written_bytes.begin(), z.written_bytes.end()));
      written = format_bytes(static_cast<std::int64_t>(bytes));
      if (z.full_bytes > 0)
        saved = fmt::format("{:.1f}%", 100.0 * (1.0 - bytes / static_cast<double>(z.full_bytes)));
      oldest = z.oldest_needed.empty() ? "-" : z.oldest_needed.back();
    }
    if (!z.restored.empty()) {
      oldest = z.read_from.empty() ? z.restored : z.read_from.front();
      read = z.restored;
      for (const std::string& name : z.read_from) read += " + " + name;
    }
    rows.push_back({r.name, rotation, format_bytes(static_cast<std::int64_t>(z.full_bytes)),
                    written, saved, written_shares(z), chain_text(z), oldest, read});
  }
  return rows;
}

const std::vector<std::string> kHeader{"case",    "rotation",      "full",
                                       "written", "saved",         "per checkpoint",
                                       "chain",   "oldest needed", "restore read"};

constexpr const char* kNote =
    "full: the bytes of the whole state; written: the median a checkpoint wrote (the first of a "
    "run holds every piece); per checkpoint: each one's written bytes against a full one; chain: "
    "the checkpoints from the oldest a restore needs to the newest (a restore: the restored one), "
    "and a restore's bytes read per byte restored (a delta reads its base's pieces whole and its "
    "changed runs over them); oldest needed: the oldest checkpoint the newest one (a restore: the "
    "restored one) points pieces at; restore read: the checkpoints a restore merged";

}  // namespace

void print_selective_table(const ReportModel& m, bool markdown, std::ostream& out) {
  if (!any_selective(m)) return;
  fmt::print(
      out, "\n{}Selective checkpoints (strategy.selective_every, partial_experts, delta_every)\n\n",
      markdown ? "## " : "");
  Table table(kHeader, {false, false, true, true, true, false, false, false, false});
  for (auto& row : selective_rows(m)) table.add(std::move(row));
  table.print(out, markdown);
  fmt::print(out, "\n{}\n", kNote);
}

std::string selective_table_html(const ReportModel& m) {
  if (!any_selective(m)) return "";
  return "<h2>Selective checkpoints</h2>" + html_table(kHeader, selective_rows(m), 2) + "<p>" +
         html_escape(kNote) + ".</p>";
}

}  // namespace ckpt::harness
