#include "harness/report/console_reporter.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "harness/common/text_format.hpp"

namespace ckpt::harness {
namespace {

// One table row's cells, in column order.
std::vector<std::string> row_cells(const CaseResult& r, BandwidthUnit unit) {
  return {std::to_string(r.config.index),
          swept_label(r.config.swept),
          format_bytes(static_cast<std::int64_t>(r.bytes_per_checkpoint)),
          std::to_string(r.files_per_checkpoint),
          bandwidth_cell(r, r.write, unit),
          bandwidth_cell(r, r.read, unit),
          r.verified ? "yes" : "no",
          r.status == "ok" ? r.status : r.status + ": " + r.error};
}

// Columns aligned right (numbers) or left (text); the last one is not padded.
constexpr bool kRightAligned[] = {true, false, true, true, true, true, false, false};

void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c)
      width[c] = std::max(width[c], display_width(row[c]));
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      line += (c == 0 ? "" : "  ") + (kRightAligned[c] ? pad_left(row[c], width[c])
                                      : last           ? row[c]
                                                       : pad_right(row[c], width[c]));
    }
    fmt::print(out, "{}\n", line);
  }
}

// "model.scale = 128: shards 1/128 of full size", or nothing when every case is at full size.
std::string scale_note(const std::vector<CaseResult>& results) {
  std::set<std::int64_t> scales;
  for (const CaseResult& r : results) scales.insert(r.config.scale);
  if (scales.empty() || (scales.size() == 1 && *scales.begin() == 1)) return "";
  if (scales.size() == 1)
    return fmt::format("model.scale = {0}: shards 1/{0} of full size", *scales.begin());
  std::string list;
  for (std::int64_t s : scales) list += (list.empty() ? "" : ", ") + std::to_string(s);
  return fmt::format("model.scale differs per case ({}): shards 1/scale of full size", list);
}

// "—: backend null stores nothing; …", or nothing when every backend stores its data.
std::string no_data_note(const std::vector<CaseResult>& results) {
  std::set<std::string> backends;
  for (const CaseResult& r : results) {
    if (!r.stores_data) backends.insert(r.config.backend);
  }
  if (backends.empty()) return "";
  std::string list;
  for (const std::string& b : backends) list += (list.empty() ? "" : ", ") + b;
  return fmt::format("—: backend {} stores nothing; its times measure the harness's own overhead",
                     list);
}

std::string seconds_text(double seconds) {
  return format_significant(seconds) + " s";
}

}  // namespace

void ConsoleReporter::begin(const RunInfo&) {
  results_.clear();
}

void ConsoleReporter::add(const CaseResult& result) {
  results_.push_back(result);
}

void ConsoleReporter::end() {
  print_summary(out_, results_, unit_);
}

std::string wall_time_line(const CaseResult& r) {
  std::string parts;
  for (const auto& [part, seconds] : r.wall.parts)
    parts += (parts.empty() ? "" : ", ") + part + " " + seconds_text(seconds);
  // Rounded down: 100% only when nothing is left over.
  const double percent = std::floor(r.wall.covered_percent() * 10) / 10;
  return fmt::format("case {}: phases cover {:.1f}% of the {} wall time ({})", r.config.index,
                     percent, seconds_text(r.wall.seconds), parts);
}

void print_summary(std::ostream& out, const std::vector<CaseResult>& results, BandwidthUnit unit) {
  if (results.empty()) return;
  const std::string u = unit_label(unit);
  std::vector<std::vector<std::string>> rows{
      {"case", "swept", "checkpoint", "files", "write " + u, "read " + u, "verified", "status"}};
  for (const CaseResult& r : results) rows.push_back(row_cells(r, unit));
  fmt::print(out, "\n");
  print_table(out, rows);
  fmt::print(out, "\nwrite and read: median [min–max] over the timed iterations; {} = {} bytes/s\n",
             u, unit == BandwidthUnit::gib ? "2^30" : "10^9");
  for (const std::string& note : {scale_note(results), no_data_note(results)}) {
    if (!note.empty()) fmt::print(out, "{}\n", note);
  }
  for (const CaseResult& r : results) fmt::print(out, "{}\n", wall_time_line(r));
}

}  // namespace ckpt::harness
