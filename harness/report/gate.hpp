#pragma once

// `ckptbench gate`: each case judged by its ratio to the calibration measured in the same run
// (measure.calibration), against the ratio a baseline file recorded on the same machine class.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/run_input.hpp"
#include "harness/report/stats.hpp"

namespace ckpt::harness {

// A change smaller than this share of the baseline ratio passes however significant it is
// (benchmarks/gate_proof.sh measured what a shared 2-core VM needs; README "Regression gate").
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
  std::string machine;      // uname machine
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
  // run. The gate widens the tolerance to the spread between these runs' medians.
  std::vector<std::size_t> write_runs, read_runs;
};
// Every case of `run` (failed ones with no ratios). Throws std::runtime_error naming the file,
// line and the fix when a case has no calibration record.
std::vector<CaseRatios> run_ratios(const RunRecord& run);

struct Baseline {
  std::string campaign;
  std::string source;        // the run it was taken from
  std::string created_utc;   // that run's time
  MachineClass machine;
  std::vector<CaseRatios> cases;
};
// Throws std::runtime_error naming the file: missing (with the command that makes one), not
// JSON, or without the fields the gate needs.
Baseline load_baseline(const std::filesystem::path& path);
// Written whole to a temporary file beside `path`, then renamed over it.
void save_baseline(const Baseline& baseline, const std::filesystem::path& path);
// `run`'s ratios as a baseline; cases of `previous` the run does not have are kept. `pool`: the
// matched cases of `previous` keep their samples and runs, and the run's are added as one more
// run (the oldest dropped beyond kMaxPooledRuns).
Baseline make_baseline(const RunRecord& run, const Baseline* previous, bool pool = false);

// Runs a pooled baseline keeps per case.
inline constexpr std::size_t kMaxPooledRuns = 10;
// Runs a baseline needs before their spread widens the tolerance.
inline constexpr std::size_t kMinRunsForSpread = 3;
// The tolerance a pooled baseline states (default of --spread-factor): at least kSpreadFactor × the largest deviation of one of
// its runs' median ratios from the pooled median (README "Regression gate": measured).
inline constexpr double kSpreadFactor = 1.5;
// That deviation: max over runs of |run median / pooled median - 1|, 0 below kMinRunsForSpread runs.
double run_spread(const std::vector<double>& pooled, const std::vector<std::size_t>& runs);

enum class GateVerdict { passed, regressed, improved, insufficient };
std::string gate_verdict_text(GateVerdict v);

struct GateRow {
  std::string label;
  std::string direction;  // "write", "read", or "write+read" (each iteration's two ratios' geometric mean)
  SampleStats base, now;  // ratio samples
  double change = 0;      // now.median / base.median - 1
  double tolerance = 0;   // the one applied: --tolerance, or --spread-factor × the baseline's run spread
  std::size_t base_runs = 1;
  MannWhitney test;       // now's ratios against the baseline's
  GateVerdict verdict = GateVerdict::insufficient;
};
// Regressed (improved): the median ratio fell (rose) by more than `tolerance` and the test says
// p < alpha; passed otherwise; insufficient below kGateMinSamples a side or when the sizes
// cannot reach p < alpha.
GateVerdict gate_decide(const SampleStats& base, const SampleStats& now, const MannWhitney& test, double tolerance,
                        double alpha);

struct GateResult {
  std::vector<GateRow> rows;
  std::vector<std::string> only_run, only_baseline;  // labels of unmatched cases
  bool any_regressed() const;
};
// Cases matched as `compare` matches them: config_hash first, then equal swept keys. Rows per
// case: write, read, and write+read when both sides hold both directions with equal counts.
// A pooled baseline's tolerance is at least `spread_factor` × run_spread.
GateResult gate_run(const std::vector<CaseRatios>& run, const Baseline& baseline, double tolerance, double alpha,
                    double spread_factor = kSpreadFactor);

void print_gate(const GateResult& result, const RunRecord& run, const std::filesystem::path& baseline_file,
                const Baseline& baseline, double tolerance, double alpha, double spread_factor, bool markdown,
                std::ostream& out);

}  // namespace ckpt::harness
