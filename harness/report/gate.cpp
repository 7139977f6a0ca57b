#include "harness/report/gate.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "harness/report/case_matching.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kFormat = "ckptbench-gate-baseline";
constexpr int kVersion = 1;
constexpr const char* kRetake = "take the baseline again with --update-baseline";
constexpr const char* kRerun = "the run's results are damaged: run the campaign again";

std::string slug(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const bool plain = std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_';
    if (plain)
      out += ch;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "unknown" : out;
}

bool positive_finite(double v) {
  return std::isfinite(v) && v > 0;
}

// `key` of `j` as an array of positive finite numbers (empty when absent or null).
std::vector<double> positive_numbers(const json& j, const char* key, const std::string& where,
                                     const char* fix) {
  std::vector<double> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array())
    throw std::runtime_error(where + ": `" + key + "` is not an array of numbers");
  for (std::size_t i = 0; i < j[key].size(); ++i) {
    const json& v = j[key][i];
    if (!v.is_number() || !positive_finite(v.get<double>())) {
      throw std::runtime_error(fmt::format("{}: `{}[{}]` is {}, not a positive finite number — {}",
                                           where, key, i, v.dump(), fix));
    }
    out.push_back(v.get<double>());
  }
  return out;
}

// `key` of `j` as text; `required`: missing or empty is an error.
std::string text_field(const json& j, const char* key, const std::string& where, bool required) {
  if (!j.contains(key) && !required) return {};
  if (!j.contains(key) || !j[key].is_string() ||
      (required && j[key].get_ref<const std::string&>().empty())) {
    throw std::runtime_error(
        fmt::format("{}: `{}` must be {}text", where, key, required ? "non-empty " : ""));
  }
  return j[key].get<std::string>();
}

// The baseline file's JSON, read whole (at most kMaxBaselineBytes) and nested at most
// kMaxBaselineDepth deep, so a hostile file can neither exhaust memory nor the stack.
json read_baseline_json(const fs::path& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec)
    throw std::runtime_error(fmt::format("{}: cannot be read: {}", path.string(), ec.message()));
  if (size > kMaxBaselineBytes) {
    throw std::runtime_error(
        fmt::format("{}: {} bytes — a gate baseline is at most {} bytes; take it again with "
                    "--update-baseline",
                    path.string(), size, kMaxBaselineBytes));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(size)))
    throw std::runtime_error(path.string() + ": cannot be read");
  const json::parser_callback_t bounded = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxBaselineDepth) {
      throw std::runtime_error(
          fmt::format("{}: JSON nested deeper than {} levels — not a gate baseline", path.string(),
                      kMaxBaselineDepth));
    }
    return true;
  };
  try {
    return json::parse(text, bounded);
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, …": the library's tag is no help.
    const std::string what = e.what();
    const std::size_t tag =
        what.starts_with("[json.exception.") ? what.find("] ") : std::string::npos;
    throw std::runtime_error(fmt::format("{}: not JSON ({})", path.string(),
                                         tag == std::string::npos ? what : what.substr(tag + 2)));
  }
}

// case GiB/s over the calibration around it: calibration sample i is taken just before timed
// iteration i and sample n just after the last, so iteration i lies between samples i and i+1 and
// is divided by their geometric mean; a record without the closing sample pairs i with i. A ratio
// that is not positive and finite (a zero or absurd time) is refused: it would poison the ranks.
std::vector<double> paired_ratios(const std::vector<double>& case_rates,
                                  const std::vector<double>& calibration, const std::string& where,
                                  const char* seconds_key) {
  std::vector<double> out;
  const bool flanked = calibration.size() > case_rates.size();
  for (std::size_t i = 0; i < std::min(case_rates.size(), calibration.size()); ++i) {
    const double peer = flanked ? std::sqrt(calibration[i] * calibration[i + 1]) : calibration[i];
    const double ratio = case_rates[i] / peer;
    if (!positive_finite(ratio)) {
      throw std::runtime_error(
          fmt::format("{}: `samples.{}[{}]` gives the ratio {} to its calibration, not a positive "
                      "finite number — {}",
                      where, seconds_key, i, ratio, kRerun));
    }
    out.push_back(ratio);
  }
  return out;
}

json machine_json(const MachineClass& m) {
  return {{"name", m.name},           {"machine", m.machine},
          {"cores", m.cores},         {"file_system", m.file_system},
          {"cpu_model", m.cpu_model}, {"memory_bytes", m.memory_bytes}};
}

json ratios_json(const CaseRatios& c) {
  json j{{"label", c.label},
         {"case", c.swept},
         {"config_hash", c.config_hash},
         {"write_ratios", c.write},
         {"read_ratios", c.read}};
  if (!c.workload_hash.empty()) j["workload_hash"] = c.workload_hash;
  if (!c.write_runs.empty()) j["write_runs"] = c.write_runs;
  if (!c.read_runs.empty()) j["read_runs"] = c.read_runs;
  return j;
}

std::vector<std::size_t> run_sizes(const json& j, const char* key, std::size_t samples,
                                   const std::string& where) {
  std::vector<std::size_t> out;
  if (!j.contains(key)) return out;
  std::size_t total = 0;
  if (!j[key].is_array())
    throw std::runtime_error(where + ": `" + key + "` is not an array of run sizes");
  for (const json& size : j[key]) {
    const double v = size.is_number() ? size.get<double>() : 0;
    if (!(v >= 1 && v <= static_cast<double>(samples)) || v != std::floor(v)) {
      throw std::runtime_error(where + ": `" + key +
                               "` holds a run size that is not a positive integer");
    }
    out.push_back(static_cast<std::size_t>(v));
    total += out.back();
  }
  if (total != samples) {
    throw std::runtime_error(
        fmt::format("{}: `{}` adds up to {} samples, the ratios hold {} — take the baseline again "
                    "with --update-baseline",
                    where, key, total, samples));
  }
  return out;
}

// `samples` of `runs` (sizes; empty: one run of all) followed by `added` as one more run, the
// oldest runs dropped beyond kMaxPooledRuns.
void pool_into(std::vector<double>& samples, std::vector<std::size_t>& runs,
               const std::vector<double>& added) {
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
  c.label = text_field(j, "label", where, false);
  c.config_hash = text_field(j, "config_hash", where, true);
  c.workload_hash = text_field(j, "workload_hash", where, false);
  c.write = positive_numbers(j, "write_ratios", where, kRetake);
  c.read = positive_numbers(j, "read_ratios", where, kRetake);
  c.write_runs = run_sizes(j, "write_runs", c.write.size(), where);
  c.read_runs = run_sizes(j, "read_runs", c.read.size(), where);
  return c;
}

// The thresholds a gated row needs: --tolerance, --alpha and --spread-factor.
struct GateLimits {
  double tolerance = kDefaultGateTolerance;
  double alpha = kGateAlpha;
  double spread_factor = kSpreadFactor;
};

GateRow gate_direction(const std::string& label, const char* direction,
                       const std::vector<double>& base, const std::vector<std::size_t>& runs,
                       const std::vector<double>& now, const GateLimits& limits, bool same_config) {
  GateRow row;
  row.label = label;
  row.direction = direction;
  row.base = sample_stats(base);
  row.now = sample_stats(now);
  row.change = row.base.median > 0 ? row.now.median / row.base.median - 1 : 0;
  row.test = mann_whitney_u(now, base);
  row.base_runs = std::max<std::size_t>(1, runs.size());
  row.same_config = same_config;
  if (!base.empty() && !now.empty()) row.detect = detection(base, runs, now, limits.spread_factor);
  row.tolerance = std::max(limits.tolerance, row.detect.smallest);
  row.verdict = gate_decide(row.base, row.now, row.test, row.tolerance, limits.alpha);
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
  if (!env.is_object() || !env.contains("cores") || !env["cores"].is_number_integer() ||
      env["cores"].get<std::int64_t>() < 1 || !env.contains("machine") ||
      !env["machine"].is_string() || !env.contains("file_system") ||
      !env["file_system"].is_string()) {
    throw std::runtime_error(
        where +
        ": the environment record lacks machine, cores or file_system (a results.jsonl of "
        "ckptbench run has them)");
  }
  MachineClass m;
  m.machine = env["machine"].get<std::string>();
  m.cores = env["cores"].get<std::int64_t>();
  m.file_system = env["file_system"].get<std::string>();
  m.cpu_model = env.contains("cpu_model") ? text_field(env, "cpu_model", where, false) : "unknown";
  if (env.contains("memory_bytes")) {
    if (!env["memory_bytes"].is_number_unsigned())
      throw std::runtime_error(where + ": `memory_bytes` is not a byte count");
    m.memory_bytes = env["memory_bytes"].get<std::uint64_t>();
  }
  m.name = fmt::format("{}-{}cpu-{}", slug(m.machine), m.cores, slug(m.file_system));
  return m;
}

std::vector<CaseRatios> run_ratios(const RunRecord& run) {
  std::vector<CaseRatios> out;
  for (const CaseRecord& c : run.cases) {
    const std::string where = fmt::format("{}:{}", c.file.string(), c.line);
    if (!c.calibration.is_object()) {
      throw std::runtime_error(
          fmt::format("{}: case {} ({}) has no calibration: the gate needs the calibration "
                      "measured in the same run — set "
                      "`[measure] calibration = true` in the campaign (or run it with --set "
                      "measure.calibration=true)",
                      where, c.case_index, c.label()));
    }
    CaseRatios r{c.label(), c.swept, c.config_hash, {}, {}};
    r.workload_hash = c.workload_hash;
    if (c.status == "ok") {
      const std::string cal = where + ": calibration";
      r.write = paired_ratios(bandwidth_samples(c, c.write),
                              positive_numbers(c.calibration, "write_gib_per_s", cal, kRerun),
                              where, "write_seconds");
      r.read = paired_ratios(bandwidth_samples(c, c.read),
                             positive_numbers(c.calibration, "read_gib_per_s", cal, kRerun), where,
                             "read_seconds");
    }
    out.push_back(std::move(r));
  }
  return out;
}

Baseline load_baseline(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    throw std::runtime_error(
        fmt::format("{}: no such baseline file — take one on this machine with `ckptbench gate RUN "
                    "--baseline {} --update-baseline` (RUN: a calibrated run of the same campaign)",
                    path.string(), path.string()));
  }
  const json j = read_baseline_json(path);
  const std::string where = path.string();
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat) {
    throw std::runtime_error(
        fmt::format("{}: not a gate baseline (`format` is not \"{}\"); write one with "
                    "--update-baseline",
                    where, kFormat));
  }
  if (!j.contains("version") || j["version"] != kVersion) {
    throw std::runtime_error(
        fmt::format("{}: baseline version {} — this ckptbench reads version {}; take it again "
                    "with --update-baseline",
                    where, j.contains("version") ? j["version"].dump() : "(none)", kVersion));
  }
  if (!j.contains("cases") || !j["cases"].is_array())
    throw std::runtime_error(where + ": `cases` is not an array");
  if (!j.contains("machine_class") || !j["machine_class"].is_object()) {
    throw std::runtime_error(where + ": `machine_class` is not an object — " + kRetake);
  }
  Baseline b;
  b.campaign = text_field(j, "campaign", where, true);
  b.source = text_field(j, "source_run", where, false);
  b.created_utc = text_field(j, "created_utc", where, false);
  b.machine = machine_class(j["machine_class"], where + ": machine_class");
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
  if (ec)
    throw std::runtime_error(fmt::format("{}: cannot replace it: {}", path.string(), ec.message()));
}

std::optional<double> run_spread(const std::vector<double>& pooled,
                                 const std::vector<std::size_t>& runs) {
  if (runs.size() < kMinRunsForSpread) return std::nullopt;
  std::vector<double> logs;
  std::size_t start = 0;
  for (const std::size_t size : runs) {
    const std::vector<double> one(pooled.begin() + static_cast<std::ptrdiff_t>(start),
                                  pooled.begin() + static_cast<std::ptrdiff_t>(start + size));
    logs.push_back(std::log(sample_stats(one).median));
    start += size;
  }
  double mean = 0;
  for (const double v : logs) mean += v / static_cast<double>(logs.size());
  double squares = 0;
  for (const double v : logs) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(logs.size() - 1));
}

double median_log_error(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  std::vector<double> logs;
  for (const double v : samples) logs.push_back(std::log(v));
  const double centre = sample_stats(logs).median;
  std::vector<double> deviations;
  for (const double v : logs) deviations.push_back(std::abs(v - centre));
  // MAD × 1.4826 estimates a normal sample's σ; the median's standard error is √(π/2) σ / √n.
  constexpr double kMadToSigma = 1.4826;
  constexpr double kMedianEfficiency = 1.2533;
  return kMedianEfficiency * kMadToSigma * sample_stats(deviations).median /
         std::sqrt(static_cast<double>(samples.size()));
}

Detection detection(const std::vector<double>& base, const std::vector<std::size_t>& base_runs,
                    const std::vector<double>& now, double spread_factor) {
  Detection d;
  const std::optional<double> spread = run_spread(base, base_runs);
  d.spread_of_runs = spread.has_value();
  d.base_spread = spread.value_or(median_log_error(base));
  d.run_error = median_log_error(now);
  const double runs = static_cast<double>(std::max<std::size_t>(1, base_runs.size()));
  const double pooled_error = d.base_spread * d.base_spread / runs;
  const double noisier = std::max(d.base_spread, d.run_error);
  d.sigma = std::sqrt(pooled_error + noisier * noisier);
  d.smallest = 1 - std::exp(-spread_factor * d.sigma);
  d.baseline_smallest =
      1 - std::exp(-spread_factor * std::sqrt(pooled_error + d.base_spread * d.base_spread));
  return d;
}

Baseline make_baseline(const RunRecord& run, const Baseline* previous, bool pool) {
  const CaseRecord& first = run.cases.front();
  Baseline b;
  b.campaign = first.config.contains("campaign")
                   ? first.config["campaign"].value("name", std::string())
                   : "";
  b.source = run.file.string();
  b.created_utc = first.environment.value("time_utc", std::string());
  b.machine =
      machine_class(first.environment, fmt::format("{}:{}", first.file.string(), first.line));
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
    case GateVerdict::passed:
      return "passed";
    case GateVerdict::regressed:
      return "regressed";
    case GateVerdict::improved:
      return "improved";
    case GateVerdict::insufficient:
      return "insufficient samples";
  }
  return "";
}

GateVerdict gate_decide(const SampleStats& base, const SampleStats& now, const MannWhitney& test,
                        double tolerance, double alpha) {
  if (too_few_samples(base.n, now.n, alpha, kGateMinSamples)) return GateVerdict::insufficient;
  if (base.median <= 0 || test.p_value >= alpha) return GateVerdict::passed;
  const double change = now.median / base.median - 1;
  if (change < -tolerance) return GateVerdict::regressed;
  if (change > tolerance) return GateVerdict::improved;
  return GateVerdict::passed;
}

bool GateResult::any_regressed() const {
  return std::any_of(rows.begin(), rows.end(),
                     [](const GateRow& r) { return r.verdict == GateVerdict::regressed; });
}

std::vector<std::size_t> gate_partners(const std::vector<CaseRatios>& baseline,
                                       const std::vector<CaseRatios>& run, CaseMatch match) {
  const auto by = [match](const CaseRatios& r) -> const std::string& {
    return match == CaseMatch::workload ? r.workload_hash : r.config_hash;
  };
  return match_cases_on(baseline, run, by, by);
}

GateResult gate_run(const std::vector<CaseRatios>& run, const Baseline& baseline, double tolerance,
                    double alpha, double spread_factor, CaseMatch match) {
  const GateLimits limits{tolerance, alpha, spread_factor};
  const std::vector<std::size_t> partner = gate_partners(baseline.cases, run, match);
  std::vector<bool> used(baseline.cases.size(), false);
  GateResult out;
  out.match = match;
  for (std::size_t i = 0; i < run.size(); ++i) {
    if (partner[i] == kNoPartner) {
      out.only_run.push_back(run[i].label);
      continue;
    }
    used[partner[i]] = true;
    const CaseRatios& b = baseline.cases[partner[i]];
    const CaseRatios& n = run[i];
    const bool same = b.config_hash == n.config_hash;
    const std::size_t before = out.rows.size();
    if (!b.write.empty() || !n.write.empty()) {
      out.rows.push_back(
          gate_direction(n.label, "write", b.write, b.write_runs, n.write, limits, same));
    }
    if (!b.read.empty() || !n.read.empty()) {
      out.rows.push_back(
          gate_direction(n.label, "read", b.read, b.read_runs, n.read, limits, same));
    }
    const std::vector<double> base_both = round_trip(b), now_both = round_trip(n);
    if (!base_both.empty() && !now_both.empty()) {
      out.rows.push_back(
          gate_direction(n.label, "write+read", base_both, b.write_runs, now_both, limits, same));
    }
    if (out.rows.size() == before) {  // a failed case: no samples either side
      out.rows.push_back(
          gate_direction(n.label, "write", b.write, b.write_runs, n.write, limits, same));
    }
  }
  for (std::size_t j = 0; j < baseline.cases.size(); ++j) {
    if (!used[j])
      out.only_baseline.push_back(baseline.cases[j].label.empty() ? "-" : baseline.cases[j].label);
  }
  return out;
}

std::string run_campaign(const RunRecord& run) {
  const json& config = run.cases.front().config;
  if (!config.contains("campaign") || !config["campaign"].is_object()) return {};
  const json& campaign = config["campaign"];
  return campaign.contains("name") && campaign["name"].is_string()
             ? campaign["name"].get<std::string>()
             : "";
}

namespace {

// Matched by workload_hash, a matched case must have the baseline case's workload_hash.
void refuse_other_workload_hash(const RunRecord& run, const CaseRatios& b, const CaseRatios& n,
                                const fs::path& baseline_file, const std::string& doing) {
  if (b.workload_hash.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: case {} has no workload_hash (a baseline taken before baselines recorded it) — take "
        "the baseline again with --update-baseline to match on the workload",
        baseline_file.string(), b.label.empty() ? "-" : b.label));
  }
  if (b.workload_hash != n.workload_hash) {
    throw std::runtime_error(fmt::format(
        "{}: case {} has workload_hash {}, the run ({}) {} — another workload's ratios are not {} "
        "it; pass {} to {} it anyway",
        baseline_file.string(), n.label, b.workload_hash, run.file.string(),
        "has " + (n.workload_hash.empty() ? std::string("none") : n.workload_hash), doing,
        kAllowOtherWorkload, doing == "gated against" ? "gate" : "pool"));
  }
}

}  // namespace

void refuse_other_workload(const RunRecord& run, const std::vector<CaseRatios>& ratios,
                           const Baseline& baseline, const fs::path& baseline_file, BaselineUse use,
                           CaseMatch match) {
  const bool pooling = use == BaselineUse::pool;
  const std::string doing = use == BaselineUse::gate ? "gated against" : "written into";
  const std::string campaign = run_campaign(run);
  const bool by_workload = match == CaseMatch::workload;
  if (!by_workload && campaign != baseline.campaign) {
    throw std::runtime_error(fmt::format(
        "{}: a baseline of campaign `{}`, the run ({}) is of `{}` — another campaign's ratios are "
        "not {} it; use "
        "results/baselines/{}-<class>.json, or pass {} if the two are meant to measure the same",
        baseline_file.string(), baseline.campaign, run.file.string(), campaign, doing, campaign,
        kAllowOtherWorkload));
  }
  if (use == BaselineUse::replace)
    return;  // retaking matched cases after a configuration change is the fix
  const std::vector<std::size_t> partner = gate_partners(baseline.cases, ratios, match);
  std::size_t matched = 0;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    if (partner[i] == kNoPartner) continue;
    ++matched;
    const CaseRatios& b = baseline.cases[partner[i]];
    if (by_workload) {
      refuse_other_workload_hash(run, b, ratios[i], baseline_file, doing);
    } else if (b.config_hash != ratios[i].config_hash) {
      throw std::runtime_error(fmt::format(
          "{}: case {} was taken with config_hash {}, the run ({}) has {} — another configuration "
          "is another workload "
          "and is not {} it; take the baseline again with --update-baseline, or pass {} to {} it "
          "anyway",
          baseline_file.string(), ratios[i].label, b.config_hash, run.file.string(),
          ratios[i].config_hash, doing, kAllowOtherWorkload, pooling ? "pool" : "gate"));
    }
  }
  if (matched == 0 && !pooling) {
    throw std::runtime_error(
        fmt::format("{}: no case of the run ({}) matches a case of the baseline — nothing would be "
                    "gated; take the baseline of this campaign with --update-baseline",
                    baseline_file.string(), run.file.string()));
  }
}

namespace {

std::string baseline_spread_text(const GateRow& row) {
  return row.detect.spread_of_runs
             ? fmt::format(
                   "its {} runs' median ratios spread {:.1f} % (standard deviation of their logs)",
                   row.base_runs, 100 * row.detect.base_spread)
             : fmt::format(
                   "its median ratio is uncertain by {:.1f} % (standard error from its "
                   "iterations; a baseline of {} run{})",
                   100 * row.detect.base_spread, row.base_runs, row.base_runs == 1 ? "" : "s");
}

bool blind(const GateRow& row, double tolerance) {
  return row.base.n > 0 && row.detect.baseline_smallest > tolerance;
}

}  // namespace

std::vector<std::string> refuse_blind_baseline(const GateResult& result,
                                               const fs::path& baseline_file, double tolerance,
                                               double spread_factor) {
  // A case is gated at the tolerance when at least one of its directions can see it; a noisier
  // direction of that case is gated at its own detectable change, and says so. A case none of
  // whose directions can see the tolerance would pass a regression of that size unseen.
  std::vector<std::string> notes;
  for (const GateRow& row : result.rows) {
    if (!blind(row, tolerance)) continue;
    const bool case_sees =
        std::any_of(result.rows.begin(), result.rows.end(), [&](const GateRow& r) {
          return r.label == row.label && r.base.n > 0 && !blind(r, tolerance);
        });
    if (case_sees) {
      notes.push_back(fmt::format(
          "note: case {} {}: {}, so this row detects only changes over {:.1f} % and is gated at "
          "that; the case's other rows gate the {:.1f} % tolerance",
          row.label, row.direction, baseline_spread_text(row), 100 * row.detect.baseline_smallest,
          100 * tolerance));
      continue;
    }
    throw std::runtime_error(
        fmt::format("{}: case {} {}: {}, so the smallest change it can detect at --spread-factor "
                    "{} is {:.1f} %, wider than the tolerance of {:.1f} % it is used with, and no "
                    "other row of the case does better — a regression between the two would "
                    "pass unseen; take the baseline again on a quiet machine of this class "
                    "(ci/gate.sh --update-baseline), or gate with --tolerance {:.2f} or more",
                    baseline_file.string(), row.label, row.direction, baseline_spread_text(row),
                    spread_factor, 100 * row.detect.baseline_smallest, 100 * tolerance,
                    std::ceil(100 * row.detect.baseline_smallest) / 100));
  }
  return notes;
}

namespace {

Table gate_table(const GateResult& r) {
  Table table({"case", "phase", "baseline ratio", "now ratio", "change", "spread base / run",
               "detectable", "tolerance", "p", "verdict"},
              {false, false, true, true, true, true, true, true, true, false});
  for (const GateRow& row : r.rows) {
    const std::string p = format_p_value(row.test.p_value);
    const bool both = row.base.n > 0 && row.now.n > 0;
    const std::string spread =
        both ? fmt::format("{:.1f}{} / {:.1f} %", 100 * row.detect.base_spread,
                           row.detect.spread_of_runs ? "" : "*", 100 * row.detect.run_error)
             : "-";
    table.add({row.label, row.direction, ratio_cell(row.base, row.base_runs),
               ratio_cell(row.now, 1), both ? fmt::format("{:+.1f} %", 100 * row.change) : "-",
               spread, both ? fmt::format("{:.1f} %", 100 * row.detect.smallest) : "-",
               fmt::format("{:.1f} %", 100 * row.tolerance), p, gate_verdict_text(row.verdict)});
  }
  return table;
}

// Unmatched cases, cases gated against another configuration, and each row's smallest
// detectable change.
void print_gate_notes(const GateResult& r, std::ostream& out) {
  for (const std::string& label : r.only_run) {
    fmt::print(out, "not in the baseline (not gated): {}\n", label);
  }
  for (const std::string& label : r.only_baseline) {
    fmt::print(out, "in the baseline only (not run): {}\n", label);
  }
  if (r.match == CaseMatch::workload) {
    fmt::print(out,
               "cases matched by workload_hash (the bytes written), not config_hash: the "
               "campaign, target, backend and tuning may differ\n");
  }
  std::string previous;  // a case's rows are adjacent: one line per case
  for (const GateRow& row : r.rows) {
    if (!row.same_config && row.label != previous) {
      if (r.match == CaseMatch::workload)
        fmt::print(out, "the same workload in another configuration (config_hash): {}\n",
                   row.label);
      else
        fmt::print(out, "another configuration (config_hash), gated as told ({}): {}\n",
                   kAllowOtherWorkload, row.label);
    }
    previous = row.label;
  }
  std::string smallest;
  for (const GateRow& row : r.rows) {
    if (row.base.n > 0 && row.now.n > 0) {
      smallest += fmt::format("{}{} {} {:.1f} %", smallest.empty() ? "" : ", ", row.label,
                              row.direction, 100 * row.detect.smallest);
    }
  }
  if (!smallest.empty()) fmt::print(out, "smallest detectable change in this run: {}\n", smallest);
}

}  // namespace

void print_gate(const GateResult& r, const RunRecord& run, const fs::path& baseline_file,
                const Baseline& baseline, double tolerance, double alpha, double spread_factor,
                bool markdown, std::ostream& out) {
  fmt::print(out, "RUN      {} ({})\nBASELINE {} (machine class {}, taken {})\n\n", run.name,
             run.file.string(), baseline_file.string(), baseline.machine.name,
             baseline.created_utc.empty() ? "-" : baseline.created_utc);
  gate_table(r).print(out, markdown);
  fmt::print(out,
             "\nratio: the case's GiB/s over the calibration's (a plain write(2)+sync / read(2) of "
             "the same bytes, taken just before and just after each iteration: their geometric "
             "mean), median [min–max] over the timed iterations (a pooled baseline: over all its "
             "runs); write+read: each iteration's write and read ratio together (their geometric "
             "mean: a change to both counts with less noise); p: two-sided Mann–Whitney U of "
             "now's ratios against the baseline's.\n"
             "spread base: the standard deviation of the log of the baseline's runs' median "
             "ratios (* fewer than {} runs: the standard error of its median, from its "
             "iterations); run: this run's median's standard error, from its iterations. "
             "detectable: the smallest change this run could show, 1 − exp(−{} σ) with σ = "
             "√(base² / runs + max(base, run)²). tolerance: the larger of --tolerance ({:.0f} %) "
             "and detectable.\n"
             "regressed / improved: the median ratio moved by more than the tolerance and p < "
             "{}; at least {} samples a side.\n",
             kMinRunsForSpread, spread_factor, 100 * tolerance, alpha, kGateMinSamples);
  print_gate_notes(r, out);
  const auto regressed = std::count_if(r.rows.begin(), r.rows.end(), [](const GateRow& row) {
    return row.verdict == GateVerdict::regressed;
  });
  fmt::print(out, "gate: {}\n",
             regressed > 0 ? fmt::format("{} regressed", regressed) : std::string("passed"));
}

}  // namespace ckpt::harness
