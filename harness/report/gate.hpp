#pragma once

// `ckptbench gate`: each case judged by its ratio to the calibration measured in the same run
// (measure.calibration), against the ratio a baseline file recorded on the same machine class.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/case_matching.hpp"
#include "harness/report/run_input.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {

// CI's promise: a drop of the median ratio beyond this fails the gate, and a baseline too spread
// to detect it is refused.
inline constexpr double kDefaultGateTolerance = 0.10;
// Significance the Mann–Whitney test of now's ratios against the baseline's must reach. 0.01
// gave one false alarm in 12 unchanged runs on the busy CI-class machine (p = 0.0099, beside a
// full ctest run); 0.005 gave none and still flagged every run of the real regression.
inline constexpr double kGateAlpha = 0.005;
// Ratio samples needed per side; sizes must also be able to reach p < alpha (5 vs 5 reaches
// only 0.0079, 6 vs 6 0.0022).
inline constexpr std::size_t kGateMinSamples = 6;

// What makes two machines comparable for the gate: architecture, online cores and the target's
// file system type, e.g. "x86_64-2cpu-ext4". The CPU model and memory are recorded beside it
// (VMs of one class differ in those between runs of a CI pool without changing the ratios much).
struct MachineClass {
  std::string name;
  std::string machine;  // uname machine
  std::int64_t cores = 0;
  std::string file_system;  // of the campaign target
  std::string cpu_model;
  std::uint64_t memory_bytes = 0;
};
// From a case's environment record (results/SCHEMA.md); `where` names it in errors.
MachineClass machine_class(const nlohmann::json& environment, const std::string& where);

// One case's ratios: case GiB/s over calibration GiB/s, per timed iteration (the calibration
// sample taken just before that iteration).
struct CaseRatios {
  std::string label;
  nlohmann::json swept = nlohmann::json::object();
  std::string config_hash;
  std::vector<double> write, read;
  // A pooled baseline's runs: how many of `write` (`read`) each run gave, in order; empty: one
  // run. The spread between these runs' medians decides the smallest change the gate can detect.
  std::vector<std::size_t> write_runs, read_runs;
  std::string workload_hash;  // "" in baselines taken before they recorded it
};
// Every case of `run` (failed ones with no ratios). Throws std::runtime_error naming the file,
// line and the fix when a case has no calibration record.
std::vector<CaseRatios> run_ratios(const RunRecord& run);

struct Baseline {
  std::string campaign;
  std::string source;       // the run it was taken from
  std::string created_utc;  // that run's time
  MachineClass machine;
  std::vector<CaseRatios> cases;
};
// A baseline is untrusted input: read whole up to kMaxBaselineBytes, JSON nesting bounded, every
// field typed, every ratio finite and positive. Throws std::runtime_error naming the file (and
// the key): missing (with the command that makes one), not JSON, a field missing or mistyped.
inline constexpr std::uintmax_t kMaxBaselineBytes = 16u << 20;
inline constexpr int kMaxBaselineDepth = 64;
Baseline load_baseline(const std::filesystem::path& path);
// Written whole to a temporary file beside `path`, then renamed over it.
void save_baseline(const Baseline& baseline, const std::filesystem::path& path);
// `run`'s ratios as a baseline; cases of `previous` the run does not have are kept. `pool`: the
// matched cases of `previous` keep their samples and runs, and the run's are added as one more
// run (the oldest dropped beyond kMaxPooledRuns).
Baseline make_baseline(const RunRecord& run, const Baseline* previous, bool pool = false);

// Runs a pooled baseline keeps per case.
inline constexpr std::size_t kMaxPooledRuns = 10;
// Runs a baseline needs before it can state its run-to-run spread (a standard deviation of fewer
// is no estimate); below this the spread is estimated from its iterations alone.
inline constexpr std::size_t kMinRunsForSpread = 3;
// k, the default of --spread-factor: a change counts only beyond 1 − exp(−k σ), σ being how far an
// unchanged run's median ratio strays from the baseline's (its run-to-run spread, and the
// uncertainty of the pooled median). k = 4 makes an unchanged run's false alarm a 4σ event per
// row (3e-5 with σ known; 0.16 % with σ estimated from 10 runs, Student's t with 9 degrees of
// freedom), and a baseline that just meets --tolerance (k σ = tolerance) catches a drop of 1.5 ×
// the tolerance with probability Φ(k / 2) = 98 %. benchmarks/RESULTS.md shows that run medians
// stray as much as their own standard error says, which this σ assumes.
inline constexpr double kSpreadFactor = 4.0;

// The standard deviation of the natural logs of the runs' median ratios (≈ a relative spread):
// how far one run's median strays from the next; std::nullopt below kMinRunsForSpread runs.
std::optional<double> run_spread(const std::vector<double>& pooled,
                                 const std::vector<std::size_t>& runs);
// The standard error of the median of `samples`' natural logs, from their median absolute
// deviation as for a normal sample: 1.2533 × 1.4826 × MAD / √n; 0 for fewer than 2 samples.
double median_log_error(const std::vector<double>& samples);

// How small a change one gated row could detect: σ = √(s² / R + max(s, e)²), s the baseline's
// run-to-run spread (from its iterations when it has fewer than kMinRunsForSpread runs), R its
// runs, e this run's own median_log_error; the smallest detectable drop is 1 − exp(−k σ).
struct Detection {
  double base_spread = 0;       // s
  bool spread_of_runs = false;  // s from R ≥ kMinRunsForSpread runs (else from its iterations)
  double run_error = 0;         // e
  double sigma = 0;
  double smallest = 0;           // this run's smallest detectable drop, a fraction
  double baseline_smallest = 0;  // the same for a run as steady as the baseline's (e ≤ s)
};
Detection detection(const std::vector<double>& base, const std::vector<std::size_t>& base_runs,
                    const std::vector<double>& now, double spread_factor);

enum class GateVerdict { passed, regressed, improved, insufficient };
std::string gate_verdict_text(GateVerdict v);

struct GateRow {
  std::string label;
  std::string
      direction;  // "write", "read", or "write+read" (each iteration's two ratios' geometric mean)
  SampleStats base, now;  // ratio samples
  double change = 0;      // now.median / base.median - 1
  double tolerance = 0;   // the one applied: the larger of --tolerance and detect.smallest
  std::size_t base_runs = 1;
  Detection detect;
  bool same_config = true;  // the case's config_hash equals the baseline case's
  MannWhitney test;         // now's ratios against the baseline's
  GateVerdict verdict = GateVerdict::insufficient;
};
// Regressed (improved): the median ratio fell (rose) by more than `tolerance` and the test says
// p < alpha; passed otherwise; insufficient below kGateMinSamples a side or when the sizes
// cannot reach p < alpha.
GateVerdict gate_decide(const SampleStats& base, const SampleStats& now, const MannWhitney& test,
                        double tolerance, double alpha);

struct GateResult {
  CaseMatch match = CaseMatch::config;
  std::vector<GateRow> rows;
  std::vector<std::string> only_run, only_baseline;  // labels of unmatched cases
  bool any_regressed() const;
};
// Cases matched as `compare` matches them: config_hash (CaseMatch::workload: workload_hash) first,
// then equal swept keys. Rows per case: write, read, and write+read when both sides hold both
// directions with equal counts. Each row's tolerance is the larger of `tolerance` and its
// smallest detectable change.
GateResult gate_run(const std::vector<CaseRatios>& run, const Baseline& baseline, double tolerance,
                    double alpha, double spread_factor = kSpreadFactor,
                    CaseMatch match = CaseMatch::config);

// Throws std::runtime_error naming the baseline file, case and direction when no row of a case
// can detect `tolerance` (every row's baseline_smallest is larger), with the fixes. Returns one
// note for each row too spread to see `tolerance` in a case that another row still gates.
std::vector<std::string> refuse_blind_baseline(const GateResult& result,
                                               const std::filesystem::path& baseline_file,
                                               double tolerance, double spread_factor);
// What a run is about to do with a baseline file: gate against it, pool into it (--pool), or
// replace its matching cases (--update-baseline).
enum class BaselineUse { gate, pool, replace };
// Throws std::runtime_error, naming kAllowOtherWorkload, when `run` is not the baseline's
// workload: another campaign name; gate and pool also a matched case whose config_hash differs;
// gate also no case matched at all (nothing would be gated). CaseMatch::workload: the campaign
// and configuration may differ, a matched case's workload_hash may not (nor be missing).
void refuse_other_workload(const RunRecord& run, const std::vector<CaseRatios>& ratios,
                           const Baseline& baseline, const std::filesystem::path& baseline_file,
                           BaselineUse use, CaseMatch match = CaseMatch::config);
// The campaign name in a run's config ("" when it has none).
std::string run_campaign(const RunRecord& run);
// The option that lets gate and --pool accept another workload's baseline.
inline constexpr const char* kAllowOtherWorkload = "--allow-other-workload";

// The partner in `baseline` of each case of `run`, matched as gate_run matches them.
std::vector<std::size_t> gate_partners(const std::vector<CaseRatios>& baseline,
                                       const std::vector<CaseRatios>& run, CaseMatch match);

void print_gate(const GateResult& result, const RunRecord& run,
                const std::filesystem::path& baseline_file, const Baseline& baseline,
                double tolerance, double alpha, double spread_factor, bool markdown,
                std::ostream& out);

}  // namespace ckpt::harness
