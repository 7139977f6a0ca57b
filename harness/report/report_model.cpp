#include "harness/report/report_model.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "harness/report/case_filter.hpp"
#include "harness/report/compression_table.hpp"
#include "harness/report/latency_table.hpp"
#include "harness/report/quantized_table.hpp"
#include "harness/report/recovery_table.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"
#include "harness/report/request_table.hpp"
#include "harness/report/selective_table.hpp"
#include "harness/report/verdict.hpp"

namespace ckpt::harness {
namespace {

using Pairs = KeyValues;

std::string values_of(const std::vector<ReportRow>& rows, const std::string& key) {
  std::set<std::string> values;
  for (const ReportRow& r : rows) values.insert(r.c->value_of(key).value_or("(none)"));
  return fmt::format("{}", fmt::join(values, ", "));
}

// The baseline of a row: a matching case of the same group and run, else of the same group,
// else of the same run, else the first.
const CaseRecord* pick_baseline(const ReportRow& row, const std::vector<ReportRow>& rows,
                                const Pairs& pairs) {
  const ReportRow* best = nullptr;
  int best_score = -1;
  for (const ReportRow& r : rows) {
    if (!case_matches(*r.c, pairs)) continue;
    const int score = (r.group == row.group ? 2 : 0) + (r.c->run == row.c->run ? 1 : 0);
    if (score > best_score) {
      best = &r;
      best_score = score;
    }
  }
  return best == nullptr ? nullptr : best->c;
}

std::optional<double> ratio(const SampleStats& a, const SampleStats& b) {
  if (a.n == 0 || b.n == 0 || b.median <= 0) return std::nullopt;
  return a.median / b.median;
}

std::vector<std::string> ordered_phases(const std::set<std::string>& present,
                                        std::vector<std::string> order) {
  std::vector<std::string> out;
  for (const std::string& p : order) {
    if (present.count(p)) out.push_back(p);
  }
  for (const std::string& p : present) {
    if (std::find(order.begin(), order.end(), p) == order.end()) out.push_back(p);
  }
  return out;
}

// Every leaf of a configuration as "a.b.c" -> its JSON text.
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      flatten(value, name, out);
    } else {
      out[name] = value.is_string() ? value.get<std::string>() : value.dump();
    }
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> config_differences(const ReportModel& m) {
  std::vector<std::pair<std::string, std::string>> out;
  if (m.runs.size() < 2) return out;
  // key -> per run the values its cases have ("" none), for keys no case sweeps
  std::map<std::string, std::vector<std::set<std::string>>> values;
  std::set<std::string> swept;
  for (std::size_t i = 0; i < m.runs.size(); ++i) {
    for (const CaseRecord& c : m.runs[i].cases) {
      for (const auto& [key, value] : c.swept.items()) swept.insert(key);
      std::map<std::string, std::string> flat;
      flatten(c.config, "", flat);
      for (const auto& [key, text] : flat) {
        auto& per_run = values[key];
        per_run.resize(m.runs.size());
        per_run[i].insert(text);
      }
    }
  }
  for (auto& [key, per_run] : values) {
    per_run.resize(m.runs.size());
    const auto& first =
        per_run.front();  // a plain reference: clang 14 cannot capture a structured binding
    if (swept.count(key) || key == "campaign.target" ||
        std::all_of(per_run.begin(), per_run.end(),
                    [&first](const auto& v) { return v == first; })) {
      continue;
    }
    std::string text;
    for (std::size_t i = 0; i < per_run.size(); ++i) {
      const std::string shown =
          per_run[i].empty() ? "(none)" : fmt::format("{}", fmt::join(per_run[i], " / "));
      text += (i ? ", " : "") + shown + " (" + m.runs[i].name + ")";
    }
    out.emplace_back(key, text);
  }
  return out;
}

namespace {

// Spread of `values` whose median is the one the record states (the console's and the phase
// table's figure), where it states one.
SampleStats recorded_stats(const std::vector<double>& values, std::optional<double> median) {
  SampleStats s = sample_stats(values);
  if (s.n > 0 && median) s.median = *median;
  return s;
}

// A [training] case: the flush bandwidth as its write, its stall and time to durable.
void training_stats(const CaseRecord& c, ReportRow& row) {
  const TrainingRecord& t = *c.training;
  if (!c.write.ran() && c.stores_data) {
    row.write_samples = t.committed(&LoopCheckpoint::flush_gib_s);
    row.write = recorded_stats(row.write_samples, t.flush_gib_s);
  }
  row.stall_samples = t.committed(&LoopCheckpoint::stall_seconds);
  row.stall = recorded_stats(row.stall_samples, c.stall_seconds);
  row.durable_samples = t.committed(&LoopCheckpoint::time_to_durable_seconds);
  row.durable = recorded_stats(row.durable_samples, c.time_to_durable_seconds);
}

// A case's row: its names, its group and its bandwidth spreads.
ReportRow make_row(const CaseRecord& c, const ReportOptions& options, bool several) {
  ReportRow row;
  row.c = &c;
  nlohmann::json rest = c.swept;  // within a group its key goes without saying (unless it is all)
  if (!options.by.empty() && rest.size() > 1) rest.erase(options.by);
  const std::string run = several ? c.run + ": " : "";
  row.name = run + swept_label(rest);
  row.full_name = run + c.label();
  if (!options.by.empty()) row.group = c.value_of(options.by).value_or("(none)");
  if (c.stores_data) {
    row.write_samples = bandwidth_samples(c, c.write);
    row.read_samples = bandwidth_samples(c, c.read);
    row.write = sample_stats(row.write_samples);
    row.read = sample_stats(row.read_samples);
    row.read_seconds = sample_stats(c.read.seconds);
  }
  if (c.training) training_stats(c, row);
  return row;
}

}  // namespace

std::string spread_text(const SampleStats& s) {
  if (s.n == 0) return "-";
  const int d = significant_decimals(s.median);
  if (s.n == 1) return fmt::format("{:.{}f}", s.median, d);
  return fmt::format("{:.{}f} [{:.{}f}–{:.{}f}]", s.median, d, s.min, d, s.max, d);
}

std::string speedup_text(const std::optional<double>& s) {
  return s ? fmt::format("{:.2f}×", *s) : "";
}

ReportModel build_report(std::vector<RunRecord> runs, const ReportOptions& options) {
  ReportModel m;
  m.runs = std::move(runs);
  m.options = options;
  const bool several = m.runs.size() > 1;
  std::set<std::string> write_phases, read_phases;
  std::map<std::string, std::set<double>> numeric;
  std::set<std::string> not_numeric;
  for (const RunRecord& run : m.runs) {
    for (const CaseRecord& c : run.cases) {
      ReportRow row = make_row(c, options, several);
      for (const auto& [name, seconds] : c.write.phases) write_phases.insert(name);
      for (const auto& [name, seconds] : c.read.phases) read_phases.insert(name);
      m.has_stall = m.has_stall || c.stall_seconds.has_value();
      m.has_durable = m.has_durable || c.time_to_durable_seconds.has_value();
      m.has_timeline = m.has_timeline || (c.training && c.training->has_timeline());
      for (const auto& [key, value] : c.swept.items()) {
        if (value.is_number())
          numeric[key].insert(value.get<double>());
        else
          not_numeric.insert(key);
      }
      m.rows.push_back(std::move(row));
    }
  }
  if (!options.by.empty() && std::none_of(m.rows.begin(), m.rows.end(), [&](const ReportRow& r) {
        return r.c->value_of(options.by);
      })) {
    throw std::runtime_error("--by " + options.by + ": no case has this key");
  }
  std::stable_sort(m.rows.begin(), m.rows.end(), [&](const ReportRow& a, const ReportRow& b) {
    if (options.by.empty()) return false;
    const auto order = [&](const ReportRow& r) {  // numbers in numeric order, then the rest by text
      const std::optional<double> n = r.c->number_of(options.by);
      return std::make_tuple(!n.has_value(), n.value_or(0), r.group);
    };
    return order(a) < order(b);
  });
  if (!options.baseline.empty()) {
    const Pairs pairs = parse_key_values(options.baseline, "--baseline");
    if (std::none_of(m.rows.begin(), m.rows.end(),
                     [&](const ReportRow& r) { return case_matches(*r.c, pairs); })) {
      throw std::runtime_error("--baseline " + options.baseline + " matches no case (" +
                               pairs.front().first + ": " + values_of(m.rows, pairs.front().first) +
                               ")");
    }
    for (ReportRow& row : m.rows) {
      row.baseline = pick_baseline(row, m.rows, pairs);
      const auto it = std::find_if(m.rows.begin(), m.rows.end(),
                                   [&](const ReportRow& r) { return r.c == row.baseline; });
      row.write_speedup = ratio(row.write, it->write);
      row.read_speedup = ratio(row.read, it->read);
    }
  }
  m.write_phases =
      ordered_phases(write_phases, {"mkdir", "open", "transfer", "sync", "close", "d2h", "gather",
                                    "metadata", "manifest", "visible", "retire"});
  m.read_phases = ordered_phases(read_phases, {"open", "transfer", "sync", "close", "h2d"});
  for (const auto& [key, values] : numeric) {
    if (values.size() >= 2 && !not_numeric.count(key)) m.numeric_keys.push_back(key);
  }
  return m;
}

std::vector<std::pair<std::string, std::string>> environment_summary(const ReportModel& model) {
  static const char* keys[] = {"host",         "kernel",       "machine", "cores",    "processes",
                               "file_system",  "target",       "comm",    "compiler", "build_type",
                               "git_revision", "cache_policy", "time_utc"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* key : keys) {
    std::vector<std::string> values;
    for (const RunRecord& run : model.runs) {
      for (const CaseRecord& c : run.cases) {
        if (!c.environment.contains(key)) continue;
        const auto& v = c.environment[key];
        std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        if (std::string(key) == "time_utc" && !c.environment.is_null()) {
          if (&c != &run.cases.front()) continue;  // a run's start only
        }
        if (std::find(values.begin(), values.end(), text) == values.end()) values.push_back(text);
      }
    }
    if (values.size() > 4) values.resize(4), values.push_back("…");
    if (!values.empty()) out.emplace_back(key, fmt::format("{}", fmt::join(values, ", ")));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> case_integrity_warnings(const ReportModel& model) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const ReportRow& r : model.rows) {
    for (const std::string& w : r.c->integrity_warnings) out.emplace_back(r.full_name, w);
  }
  return out;
}

void print_report(const ReportModel& m, bool markdown, std::ostream& out) {
  const std::string h2 = markdown ? "## " : "";
  if (const std::string answer = verdict(m); !answer.empty())
    fmt::print(out, "{}Summary\n\n{}\n\n", h2, answer);
  fmt::print(out, "{}Runs\n\n", h2);
  for (const RunRecord& run : m.runs)
    fmt::print(out, "{}{}: {} cases ({})\n", markdown ? "- " : "  ", run.name, run.cases.size(),
               run.file.string());
  const auto differences = config_differences(m);
  if (!differences.empty()) {
    fmt::print(out, "\n{}Configuration differences between the runs\n\n", h2);
    Table diff({"key", "values"}, {false, false});
    for (const auto& [key, value] : differences) diff.add({key, value});
    diff.print(out, markdown);
  }
  fmt::print(out, "\n{}Environment\n\n", h2);
  Table env({"key", "value"}, {false, false});
  for (const auto& [key, value] : environment_summary(m)) env.add({key, value});
  env.print(out, markdown);
  const auto warnings = case_integrity_warnings(m);
  if (!warnings.empty()) {
    fmt::print(out, "\n{}Integrity warnings (what may make a number better than the storage)\n\n",
               h2);
    Table table({"case", "warning"}, {false, false});
    for (const auto& [name, warning] : warnings) table.add({name, warning});
    table.print(out, markdown);
  }

  const bool speedups = !m.options.baseline.empty();
  fmt::print(out, "\n{}Bandwidth (GiB/s, median [min–max] over the timed iterations)\n\n", h2);
  std::vector<std::string> header{"case", "status", "write GiB/s", "read GiB/s"};
  std::vector<bool> right{false, false, true, true};
  if (speedups)
    header.insert(header.end(), {"write ×", "read ×"}), right.insert(right.end(), {true, true});
  Table bw(header, right);
  std::string group = "\x01";
  for (const ReportRow& r : m.rows) {
    if (!m.options.by.empty() && r.group != group)
      bw.add_heading(m.options.by + " = " + (group = r.group));
    std::vector<std::string> row{r.name, r.c->status, r.c->stores_data ? spread_text(r.write) : "—",
                                 r.c->stores_data ? spread_text(r.read) : "—"};
    if (speedups)
      row.insert(row.end(), {speedup_text(r.write_speedup), speedup_text(r.read_speedup)});
    bw.add(std::move(row));
  }
  bw.print(out, markdown);
  if (speedups)
    fmt::print(out,
               "\n×: median bandwidth / the baseline's ({}; of the same group and run where there "
               "is one)\n",
               m.options.baseline);
  if (std::any_of(m.rows.begin(), m.rows.end(),
                  [](const ReportRow& r) { return r.c->training && !r.c->write.ran(); })) {
    fmt::print(out,
               "write of a [training] case: its flush bandwidth, median [min–max] over the "
               "committed checkpoints\n");
  }
  if (std::any_of(m.rows.begin(), m.rows.end(),
                  [](const ReportRow& r) { return !r.c->stores_data; })) {
    fmt::print(out, "—: a backend that stores nothing (its rate is the harness's own overhead)\n");
  }

  fmt::print(out, "\n{}Phases (median seconds)\n\n", h2);
  std::vector<std::string> ph{"case"};
  for (const std::string& p : m.write_phases) ph.push_back("w." + p);
  for (const std::string& p : m.read_phases) ph.push_back("r." + p);
  if (m.has_stall) ph.push_back("stall");
  if (m.has_durable) ph.push_back("to durable");
  std::vector<bool> numbers(ph.size(), true);
  numbers[0] = false;
  Table phases(ph, numbers);
  group = "\x01";
  for (const ReportRow& r : m.rows) {
    if (!m.options.by.empty() && r.group != group)
      phases.add_heading(m.options.by + " = " + (group = r.group));
    std::vector<std::string> row{r.name};
    for (const std::string& p : m.write_phases)
      row.push_back(r.c->write.phases.count(p) ? format_significant(r.c->write.phases.at(p)) : "-");
    for (const std::string& p : m.read_phases)
      row.push_back(r.c->read.phases.count(p) ? format_significant(r.c->read.phases.at(p)) : "-");
    if (m.has_stall)
      row.push_back(r.c->stall_seconds ? format_significant(*r.c->stall_seconds) : "-");
    if (m.has_durable)
      row.push_back(r.c->time_to_durable_seconds ? format_significant(*r.c->time_to_durable_seconds)
                                                 : "-");
    phases.add(std::move(row));
  }
  phases.print(out, markdown);
  fmt::print(
      out, "\nw.: checkpoint (write) phases, r.: restore (read) phases, of the slowest process\n");
  if (std::find(m.write_phases.begin(), m.write_phases.end(), "visible") != m.write_phases.end())
    fmt::print(out, "w.visible: from the commit until another process saw the checkpoint\n");
  print_compression_table(m, markdown, out);
  print_selective_table(m, markdown, out);
  print_quantized_table(m, markdown, out);
  print_recovery_table(m, markdown, out);
  print_latency_table(m, markdown, out);
  print_request_table(m, markdown, out);
}

}  // namespace ckpt::harness
