#include "harness/report/recovery_table.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <vector>

#include "harness/common/text_format.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

struct SourceFigures {
  const char* name;
  int parts;
  std::uint64_t bytes;
  double seconds;
  int from_memory = 0;  // peer: the parts a peer sent from its memory tier
};

std::array<SourceFigures, 4> recovery_sources(const RecoveryRecord& r) {
  return {{{"memory", r.memory_parts, r.memory_bytes, r.memory_seconds},
           {"local", r.local_parts, r.local_bytes, r.local_seconds},
           {"peer", r.peer_parts, r.peer_bytes, r.peer_seconds, r.peer_parts_from_memory},
           {"remote", r.remote_parts, r.remote_bytes, r.remote_seconds}}};
}

// "2 parts, 1.2 MiB in 0.001 s" ("2 parts (2 from the peers' memory), ..."); "-" for a source no
// part came from.
std::string source_figures(const SourceFigures& s) {
  if (s.parts == 0) return "-";
  return fmt::format(
      "{} part{}{}, {} in {} s", s.parts, s.parts == 1 ? "" : "s",
      s.from_memory > 0 ? fmt::format(" ({} from the peers' memory)", s.from_memory) : "",
      format_bytes(static_cast<std::int64_t>(s.bytes)), format_significant(s.seconds));
}

const RecoveryRecord* recovery_of_row(const ReportRow& row) {
  const auto& t = row.c->training;
  return t && t->recovery ? &*t->recovery : nullptr;
}

bool any_recovery(const ReportModel& m) {
  return std::any_of(m.rows.begin(), m.rows.end(),
                     [](const ReportRow& r) { return recovery_of_row(r) != nullptr; });
}

std::vector<std::vector<std::string>> recovery_rows(const ReportModel& m) {
  std::vector<std::vector<std::string>> rows;
  for (const ReportRow& row : m.rows) {
    const RecoveryRecord* r = recovery_of_row(row);
    if (r == nullptr) continue;
    std::vector<std::string> cells{row.name, fmt::format("{{{}}}", fmt::join(r->lost_nodes, ", ")),
                                   r->restarted ? "restarted job" : "same job",
                                   std::to_string(r->iteration),
                                   format_significant(r->seconds) + " s"};
    for (const SourceFigures& s : recovery_sources(*r)) cells.push_back(source_figures(s));
    rows.push_back(std::move(cells));
  }
  return rows;
}

const std::vector<std::string> kRecoveryHeader{
    "case", "lost nodes", "by", "iteration", "seconds", "memory", "local", "peer", "remote"};

constexpr const char* kRecoveryNote =
    "seconds: from a barrier to the slowest process's part in place; per source (memory: the "
    "process's own memory tier, local: its node's local tier, peer: a clique peer's over MPI, "
    "from its memory tier's replicas or its node's local tier, "
    "remote: the backend) the parts that came from it, their bytes and the slowest of their "
    "processes' seconds";

}  // namespace

std::string recovery_text(const RecoveryRecord& r) {
  std::string text =
      fmt::format("recovery of iteration {} after losing nodes {{{}}}{}: {} s", r.iteration,
                  fmt::join(r.lost_nodes, ", "), r.restarted ? " (restarted job)" : "",
                  format_significant(r.seconds));
  for (const SourceFigures& s : recovery_sources(r)) {
    if (s.parts > 0) text += fmt::format("; {} {}", s.name, source_figures(s));
  }
  return text;
}

void print_recovery_table(const ReportModel& m, bool markdown, std::ostream& out) {
  if (!any_recovery(m)) return;
  fmt::print(out, "\n{}Recovery from the tiers (tiers.lost_nodes)\n\n", markdown ? "## " : "");
  Table table(kRecoveryHeader, {false, false, false, true, true, true, true, true, true});
  for (auto& row : recovery_rows(m)) table.add(std::move(row));
  table.print(out, markdown);
  fmt::print(out, "\n{}\n", kRecoveryNote);
}

std::string recovery_table_html(const ReportModel& m) {
  if (!any_recovery(m)) return "";
  return "<h2>Recovery from the tiers</h2>" + html_table(kRecoveryHeader, recovery_rows(m), 3) +
         "<p>" + html_escape(kRecoveryNote) + ".</p>";
}

}  // namespace ckpt::harness
