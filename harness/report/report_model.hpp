#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/run_input.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {

struct ReportOptions {
  std::string by;        // --by KEY: group the cases by this key's value ("" none)
  std::string baseline;  // --baseline 'KEY=VALUE[,KEY=VALUE…]' ("" none)
};

// One case of the report: bandwidth spreads (GiB/s) from its samples, its speedups against the
// baseline case.
struct ReportRow {
  const CaseRecord* c = nullptr;
  std::string name;       // "label" or, with several runs, "run: label"; without the --by key
  std::string full_name;  // the same with every swept key (the charts' case names)
  std::string group;      // the --by value ("" without --by)
  // write: the timed iterations' bandwidth; a [training] case's flush bandwidth over its committed
  // checkpoints (median: training.flush_gib_s), as the console shows it. read: the restore's or
  // the load's bandwidth.
  SampleStats write, read;
  SampleStats read_seconds;  // the restore's (load's) time per timed iteration
  // [training]: over the committed checkpoints, medians as training.stall_seconds and
  // training.time_to_durable_seconds record them (n = 0 without a committed checkpoint).
  SampleStats stall, durable;
  // The samples each spread above was taken from (the verdict tests its differences with them).
  std::vector<double> write_samples, read_samples, stall_samples, durable_samples;
  std::optional<double> write_speedup, read_speedup;
  const CaseRecord* baseline = nullptr;
};

struct ReportModel {
  std::vector<RunRecord> runs;
  std::vector<ReportRow> rows;  // grouped (stable within a group: run, then case order)
  ReportOptions options;
  std::vector<std::string> write_phases, read_phases;  // phases any case has, in pipeline order
  bool has_stall = false, has_durable = false;
  bool has_timeline = false;              // a [training] case recorded its loop's timestamps
  std::vector<std::string> numeric_keys;  // swept keys with numeric values, at least two distinct
};

// Throws std::runtime_error for a --baseline that is not KEY=VALUE or matches no case (naming
// the values the key has), and for a --by key no case has.
ReportModel build_report(std::vector<RunRecord> runs, const ReportOptions& options);

// The text (or Markdown) report: environment, bandwidth table, phase table.
void print_report(const ReportModel& model, bool markdown, std::ostream& out);

// "0.478 [0.405–0.542]" ("-": no samples).
std::string spread_text(const SampleStats& s);
// "1.23×" ("" none).
std::string speedup_text(const std::optional<double>& s);
// With several runs: the campaign keys (not swept) whose values differ between the runs, as
// (key, "value (run), value (run)"), e.g. a --set between two runs of one campaign.
std::vector<std::pair<std::string, std::string>> config_differences(const ReportModel& model);
// Every case's integrity warnings (integrity.warnings) as (case name, warning), in row order.
std::vector<std::pair<std::string, std::string>> case_integrity_warnings(const ReportModel& model);
// Environment rows: (key, value over all runs — distinct values joined with ", ").
std::vector<std::pair<std::string, std::string>> environment_summary(const ReportModel& model);

}  // namespace ckpt::harness
