#include "harness/report/gate.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "harness/common/json_input.hpp"
#include "harness/report/case_matching.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "ckptbench-gate-baseline";
constexpr int kVersion = 1;

std::string slug(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const bool plain = std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
    if (plain) out += ch;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::vector<double> numbers(const json& j, const char* key, const std::string& where) {
  std::vector<double> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array()) throw std::runtime_error(where + ": `" + key + "` is not an array of numbers");
  for (const json& v : j[key]) {
    if (!v.is_number()) throw std::runtime_error(where + ": `" + key + "` holds a non-number");
    out.push_back(v.get<double>());
  }
  return out;
}

// case GiB/s over the calibration around it: calibration sample i is taken just before timed
// iteration i and sample n just after the last, so iteration i lies between samples i and i+1 and
// is divided by their geometric mean; a record without the closing sample pairs i with i.
std::vector<double> paired_ratios(const std::vector<double>& case_rates, const std::vector<double>& calibration) {
  std::vector<double> out;
  const bool flanked = calibration.size() > case_rates.size();
  for (std::size_t i = 0; i < std::min(case_rates.size(), calibration.size()); ++i) {
    const double peer = flanked ? std::sqrt(calibration[i] * calibration[i + 1]) : calibration[i];
    if (peer > 0 && case_rates[i] > 0) out.push_back(case_rates[i] / peer);
  }
  return out;
}

json machine_json(const MachineClass& m) {
  return {{"name", m.name}, {"machine", m.machine}, {"cores", m.cores}, {"file_system", m.file_system},
          {"cpu_model", m.cpu_model}, {"memory_bytes", m.memory_bytes}};
}

json ratios_json(const CaseRatios& c) {
  json j{{"label", c.label}, {"case", c.swept}, {"config_hash", c.config_hash},
         {"write_ratios", c.write}, {"read_ratios", c.read}};
  if (!c.write_runs.empty()) j["write_runs"] = c.write_runs;
  if (!c.read_runs.empty()) j["read_runs"] = c.read_runs;
  return j;
}

std::vector<std::size_t> run_sizes(const json& j, const char* key, std::size_t samples, const std::string& where) {
  std::vector<std::size_t> out;
  if (!j.contains(key)) return out;
  std::size_t total = 0;
  for (const double v : numbers(j, key, where)) {
    if (v < 1 || v != static_cast<double>(static_cast<std::size_t>(v))) {
      throw std::runtime_error(where + ": `" + key + "` holds a run size that is not a positive integer");
    }
    out.push_back(static_cast<std::size_t>(v));
    total += out.back();
  }
  if (total != samples) {
    throw std::runtime_error(fmt::format("{}: `{}` adds up to {} samples, the ratios hold {} — take the baseline again "
                                         "with --update-baseline", where, key, total, samples));
  }
  return out;
}

// `samples` of `runs` (sizes; empty: one run of all) followed by `added` as one more run, the
// oldest runs dropped beyond kMaxPooledRuns.
void pool_into(std::vector<double>& samples, std::vector<std::size_t>& runs, const std::vector<double>& added) {
  if (added.empty()) return;
  if (runs.empty() && !samples.empty()) runs.push_back(samples.size());
  samples.insert(samples.end(), added.begin(), added.end());
  runs.push_back(added.size());
  while (runs.size() > kMaxPooledRuns) {
    samples.erase(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(runs.front()));
    runs.erase(runs.begin());
  }
}

CaseRatios ratios_of(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("case") || !j["case"].is_object()) {
    throw std::runtime_error(where + ": a case needs `case` (the swept keys, an object)");
  }
  CaseRatios c;
  c.swept = j["case"];
  c.label = j.value("label", std::string());
  c.config_hash = j.value("config_hash", std::string());
  c.write = numbers(j, "write_ratios", where);
  c.read = numbers(j, "read_ratios", where);
  c.write_runs = run_sizes(j, "write_runs", c.write.size(), where);
  c.read_runs = run_sizes(j, "read_runs", c.read.size(), where);
  return c;
}

GateRow gate_direction(const std::string& label, const char* direction, const std::vector<double>& base,
                       const std::vector<std::size_t>& base_runs, const std::vector<double>& now, double tolerance,
                       double alpha, double spread_factor) {
  GateRow row;
  row.label = label;
  row.direction = direction;
  row.base = sample_stats(base);
  row.now = sample_stats(now);
  row.change = row.base.median > 0 ? row.now.median / row.base.median - 1 : 0;
  row.test = mann_whitney_u(now, base);
  row.base_runs = std::max<std::size_t>(1, base_runs.size());
  row.tolerance = std::max(tolerance, spread_factor * run_spread(base, base_runs));
  row.verdict = gate_decide(row.base, row.now, row.test, row.tolerance, alpha);
  return row;
}

// Each iteration's checkpoint and restore together: the geometric mean of its write and read
// ratio. Empty unless both directions hold the same number of samples (and, pooled, runs).
std::vector<double> round_trip(const CaseRatios& c) {
  std::vector<double> out;
  if (c.write.empty() || c.write.size() != c.read.size() || c.write_runs != c.read_runs) return out;
  for (std::size_t i = 0; i < c.write.size(); ++i) out.push_back(std::sqrt(c.write[i] * c.read[i]));
  return out;
}

std::string ratio_cell(const SampleStats& s, std::size_t runs) {
  if (s.n == 0) return "-";
  const std::string pooled = runs > 1 ? fmt::format(" ({} runs)", runs) : std::string();
  return fmt::format("{:.3f} [{:.3f}–{:.3f}] n={}{}", s.median, s.min, s.max, s.n, pooled);
}

}  // namespace

MachineClass machine_class(const json& env, const std::string& where) {
  if (!env.is_object() || !env.contains("cores") || !env["cores"].is_number_integer() || !env.contains("machine") ||
      !env["machine"].is_string() || !env.contains("file_system") || !env["file_system"].is_string()) {
    throw std::runtime_error(where + ": the environment record lacks machine, cores or file_system (a results.jsonl of "
                                     "ckptbench run has them)");
  }
  MachineClass m;
  m.machine = env["machine"].get<std::string>();
  m.cores = env["cores"].get<std::int64_t>();
  m.file_system = env["file_system"].get<std::string>();
  m.cpu_model = env.value("cpu_model", std::string("unknown"));
  m.memory_bytes = env.value("memory_bytes", std::uint64_t{0});
  m.name = fmt::format("{}-{}cpu-{}", slug(m.machine), m.cores, slug(m.file_system));
  return m;
}

std::vector<CaseRatios> run_ratios(const RunRecord& run) {
  std::vector<CaseRatios> out;
  for (const CaseRecord& c : run.cases) {
    const std::string where = fmt::format("{}:{}", c.file.string(), c.line);
    if (!c.calibration.is_object()) {
      throw std::runtime_error(fmt::format(
          "{}: case {} ({}) has no calibration: the gate needs the calibration measured in the same run — set "
          "`[measure] calibration = true` in the campaign (or run it with --set measure.calibration=true)",
          where, c.case_index, c.label()));
    }
    CaseRatios r{c.label(), c.swept, c.config_hash, {}, {}};
    if (c.status == "ok") {
      r.write = paired_ratios(bandwidth_samples(c, c.write), numbers(c.calibration, "write_gib_per_s", where));
      r.read = paired_ratios(bandwidth_samples(c, c.read), numbers(c.calibration, "read_gib_per_s", where));
    }
    out.push_back(std::move(r));
  }
  return out;
}

Baseline load_baseline(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw std::runtime_error(fmt::format("{}: no such baseline file — take one on this machine with `ckptbench gate RUN "
                                         "--baseline {} --update-baseline` (RUN: a calibrated run of the same campaign)",
                                         path.string(), path.string()));
  }
  const json j = read_untrusted_json_file(path, {.file = path.string()});
  if (!j.is_object() || j.value("format", std::string()) != kFormat) {
    throw std::runtime_error(fmt::format("{}: not a gate baseline (`format` is not \"{}\"); write one with "
                                         "--update-baseline", path.string(), kFormat));
  }
  if (j.value("version", 0) != kVersion) {
    throw std::runtime_error(fmt::format("{}: baseline version {} — this ckptbench reads version {}; take it again "
                                         "with --update-baseline", path.string(), j.value("version", 0), kVersion));
  }
  if (!j.contains("cases") || !j["cases"].is_array()) throw std::runtime_error(path.string() + ": `cases` is not an array");
  Baseline b;
  b.campaign = j.value("campaign", std::string());
  b.source = j.value("source_run", std::string());
  b.created_utc = j.value("created_utc", std::string());
  b.machine = machine_class(j.value("machine_class", json::object()), path.string() + ": machine_class");
  for (std::size_t i = 0; i < j["cases"].size(); ++i) {
    b.cases.push_back(ratios_of(j["cases"][i], fmt::format("{}: cases[{}]", path.string(), i)));
  }
  return b;
}

void save_baseline(const Baseline& b, const fs::path& path) {
  json cases = json::array();
  for (const CaseRatios& c : b.cases) cases.push_back(ratios_json(c));
  const json j{{"format", kFormat},
               {"version", kVersion},
               {"campaign", b.campaign},
               {"source_run", b.source},
               {"created_utc", b.created_utc},
               {"machine_class", machine_json(b.machine)},
               {"cases", cases}};
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << j.dump(2) << '\n';
    out.close();
    if (!out) throw std::runtime_error(fmt::format("{}: cannot be written", temporary.string()));
  }
  fs::rename(temporary, path, ec);
  if (ec) throw std::runtime_error(fmt::format("{}: cannot replace it: {}", path.string(), ec.message()));
}

double run_spread(const std::vector<double>& pooled, const std::vector<std::size_t>& runs) {
  if (runs.size() < kMinRunsForSpread) return 0;
  const double centre = sample_stats(pooled).median;
  if (centre <= 0) return 0;
  double fall = 0;  // the largest deviation so far
  std::size_t start = 0;
  for (const std::size_t size : runs) {
    const std::vector<double> one(pooled.begin() + static_cast<std::ptrdiff_t>(start),
                                  pooled.begin() + static_cast<std::ptrdiff_t>(start + size));
    fall = std::max(fall, std::abs(1 - sample_stats(one).median / centre));
    start += size;
  }
  return fall;
}

Baseline make_baseline(const RunRecord& run, const Baseline* previous, bool pool) {
  const CaseRecord& first = run.cases.front();
  Baseline b;
  b.campaign = first.config.contains("campaign") ? first.config["campaign"].value("name", std::string()) : "";
  b.source = run.file.string();
  b.created_utc = first.environment.value("time_utc", std::string());
  b.machine = machine_class(first.environment, fmt::format("{}:{}", first.file.string(), first.line));
  b.cases = run_ratios(run);
  if (previous != nullptr) {
    const std::vector<std::size_t> partner = match_cases(b.cases, previous->cases);
    std::vector<CaseRatios> kept;
    for (std::size_t i = 0; i < previous->cases.size(); ++i) {
      if (partner[i] == kNoPartner) {
        kept.push_back(previous->cases[i]);
      } else if (pool) {
        CaseRatios pooled = previous->cases[i];
        const CaseRatios& now = b.cases[partner[i]];
        pool_into(pooled.write, pooled.write_runs, now.write);
        pool_into(pooled.read, pooled.read_runs, now.read);
        b.cases[partner[i]].write = std::move(pooled.write);
        b.cases[partner[i]].write_runs = std::move(pooled.write_runs);
        b.cases[partner[i]].read = std::move(pooled.read);
        b.cases[partner[i]].read_runs = std::move(pooled.read_runs);
      }
    }
    b.cases.insert(b.cases.end(), kept.begin(), kept.end());
    if (pool) b.source = previous->source + ", " + b.source;
  }
  return b;
}

std::string gate_verdict_text(GateVerdict v) {
  switch (v) {
    case GateVerdict::passed: return "passed";
    case GateVerdict::regressed: return "regressed";
    case GateVerdict::improved: return "improved";
    case GateVerdict::insufficient: return "insufficient samples";
  }
  return "";
}

GateVerdict gate_decide(const SampleStats& base, const SampleStats& now, const MannWhitney& test, double tolerance,
                        double alpha) {
  if (base.n < kGateMinSamples || now.n < kGateMinSamples || smallest_p_value(base.n, now.n) >= alpha) {
    return GateVerdict::insufficient;
  }
  if (base.median <= 0 || test.p_value >= alpha) return GateVerdict::passed;
  const double change = now.median / base.median - 1;
  if (change < -tolerance) return GateVerdict::regressed;
  if (change > tolerance) return GateVerdict::improved;
  return GateVerdict::passed;
}

bool GateResult::any_regressed() const {
  return std::any_of(rows.begin(), rows.end(), [](const GateRow& r) { return r.verdict == GateVerdict::regressed; });
}

GateResult gate_run(const std::vector<CaseRatios>& run, const Baseline& baseline, double tolerance, double alpha,
                    double spread_factor) {
  const std::vector<std::size_t> partner = match_cases(baseline.cases, run);
  std::vector<bool> used(baseline.cases.size(), false);
  GateResult out;
  for (std::size_t i = 0; i < run.size(); ++i) {
    if (partner[i] == kNoPartner) {
      out.only_run.push_back(run[i].label);
      continue;
    }
    used[partner[i]] = true;
    const CaseRatios& b = baseline.cases[partner[i]];
    const std::size_t before = out.rows.size();
    if (!b.write.empty() || !run[i].write.empty()) {
      out.rows.push_back(gate_direction(run[i].label, "write", b.write, b.write_runs, run[i].write, tolerance, alpha, spread_factor));
    }
    if (!b.read.empty() || !run[i].read.empty()) {
      out.rows.push_back(gate_direction(run[i].label, "read", b.read, b.read_runs, run[i].read, tolerance, alpha, spread_factor));
    }
    const std::vector<double> base_both = round_trip(b), now_both = round_trip(run[i]);
    if (!base_both.empty() && !now_both.empty()) {
      out.rows.push_back(gate_direction(run[i].label, "write+read", base_both, b.write_runs, now_both, tolerance, alpha,
                                        spread_factor));
    }
    if (out.rows.size() == before) {  // a failed case: no samples either side
      out.rows.push_back(gate_direction(run[i].label, "write", b.write, b.write_runs, run[i].write, tolerance, alpha, spread_factor));
    }
  }
  for (std::size_t j = 0; j < baseline.cases.size(); ++j) {
    if (!used[j]) out.only_baseline.push_back(baseline.cases[j].label.empty() ? "-" : baseline.cases[j].label);
  }
  return out;
}

void print_gate(const GateResult& r, const RunRecord& run, const fs::path& baseline_file, const Baseline& baseline,
                double tolerance, double alpha, double spread_factor, bool markdown, std::ostream& out) {
  fmt::print(out, "RUN      {} ({})\nBASELINE {} (machine class {}, taken {})\n\n", run.name, run.file.string(),
             baseline_file.string(), baseline.machine.name, baseline.created_utc.empty() ? "-" : baseline.created_utc);
  Table table({"case", "phase", "baseline ratio", "now ratio", "change", "tolerance", "p", "verdict"},
              {false, false, true, true, true, true, true, false});
  for (const GateRow& row : r.rows) {
    const std::string p = row.test.p_value >= 0.001 ? fmt::format("{:.3f}", row.test.p_value)
                                                    : fmt::format("{:.1e}", row.test.p_value);
    table.add({row.label, row.direction, ratio_cell(row.base, row.base_runs), ratio_cell(row.now, 1),
               row.base.n > 0 && row.now.n > 0 ? fmt::format("{:+.1f} %", 100 * row.change) : "-",
               fmt::format("{:.1f} %", 100 * row.tolerance), p, gate_verdict_text(row.verdict)});
  }
  table.print(out, markdown);
  fmt::print(out,
             "\nratio: the case's GiB/s over the calibration's (a plain write(2)+sync / read(2) of the same bytes, taken "
             "just before and just after each iteration: their geometric mean), median [min–max] over the timed "
             "iterations (a pooled baseline: over all its runs); write+read: each iteration's write and read ratio together "
             "(their geometric mean: a change to both counts with less noise); p: two-sided Mann–Whitney U of now's ratios against the "
             "baseline's.\nregressed / improved: the median ratio moved by more than the tolerance and p < {}; at least {} "
             "samples a side. tolerance: --tolerance ({:.0f} %), or for a baseline pooled from {} runs or more {}× the "
             "largest deviation of one run's median from the pooled median, whichever is larger.\n",
             alpha, kGateMinSamples, 100 * tolerance, kMinRunsForSpread, spread_factor);
  for (const std::string& label : r.only_run) fmt::print(out, "not in the baseline (not gated): {}\n", label);
  for (const std::string& label : r.only_baseline) fmt::print(out, "in the baseline only (not run): {}\n", label);
  const auto regressed = std::count_if(r.rows.begin(), r.rows.end(), [](const GateRow& row) { return row.verdict == GateVerdict::regressed; });
  fmt::print(out, "gate: {}\n", regressed > 0 ? fmt::format("{} regressed", regressed) : std::string("passed"));
}

}  // namespace ckpt::harness
