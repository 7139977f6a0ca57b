#include "harness/cli/gate_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "harness/common/elapsed.hpp"
#include "harness/common/text_format.hpp"

namespace ckpt::harness {
namespace {

// A number in [low, high]; NaN, inf and anything outside are refused naming the range (CLI11's
// Range lets NaN through: every comparison with it is false).
CLI::Validator finite_in(double low, double high, const std::string& meaning) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const std::optional<double> v = parse_number(text);
        if (!v || !std::isfinite(*v) || *v < low || *v > high) {
          return fmt::format("`{}` is not a number from {} to {} ({})", text, low, high, meaning);
        }
        return {};
      },
      fmt::format("NUMBER in [{} - {}]", low, high));
}

constexpr const char* kMethod =
    "Method: per case and phase the gate compares the median of this run's ratios (case GiB/s "
    "over the calibration's) with the baseline's. How far an unchanged run's median strays is "
    "sigma = sqrt(s^2/R + max(s, e)^2): s the standard deviation of the log of the baseline's R "
    "runs' medians (a pooled baseline, R >= 3; else its median's standard error), e this run's "
    "own median's standard error. A change counts only beyond the larger of --tolerance and "
    "1 - exp(-k sigma), k = --spread-factor (4: an unchanged run's false alarm is a 4 sigma "
    "event, and a baseline that just meets the tolerance catches 1.5 x the tolerance 98 % of the "
    "time), and only when the Mann-Whitney p < --alpha. A row whose baseline's own "
    "1 - exp(-k s sqrt(1 + 1/R)) exceeds --tolerance is gated at that level and noted under the "
    "table; a case none of whose rows can detect the tolerance is refused (exit 2). Take "
    "baselines on a quiet machine of the class from runs that follow other work, as CI's does: "
    "runs back to back understate the spread between runs.";

}  // namespace

CLI::App* add_gate_command(CLI::App& app, GateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("gate",
                                     "Regression gate: each case's ratio to the calibration of the "
                                     "same run against a baseline's ratio");
  cmd->add_option("RUN", o.run,
                  "A run with measure.calibration = true (directory or results.jsonl)")
      ->required();
  CLI::Option* baseline =
      cmd->add_option("--baseline", o.baseline, "Baseline file (results/baselines/<name>.json)");
  cmd->add_option("--tolerance", o.tolerance,
                  "Smallest drop of the median ratio that fails the gate, as a fraction (0.1 = 10 "
                  "%); a baseline too "
                  "spread to detect it is refused")
      ->check(finite_in(0.0, 1.0, "a fraction: 0.1 = 10 %"))
      ->capture_default_str();
  cmd->add_option("--alpha", o.alpha, "Significance the Mann-Whitney test of the ratios must reach")
      ->check(finite_in(1e-9, 0.5, "a significance level"))
      ->capture_default_str();
  cmd->add_option(
         "--spread-factor", o.spread_factor,
         "k: a change counts only beyond 1 - exp(-k sigma), sigma how far an unchanged run's "
         "median ratio strays "
         "(see Method below)")
      ->check(finite_in(0.0, 100.0, "a multiple of the spread"))
      ->capture_default_str();
  cmd->add_flag("--update-baseline", o.update_baseline,
                "Write the run's ratios into the baseline file (created, or its matching cases "
                "replaced) instead of gating")
      ->needs(baseline);
  cmd->add_flag("--pool", o.pool,
                fmt::format(
                    "With --update-baseline: add the run to the baseline's matching cases as one "
                    "more run (at most "
                    "{} kept) instead of replacing them; from {} runs on, their spread is measured",
                    kMaxPooledRuns, kMinRunsForSpread))
      ->needs("--update-baseline");
  cmd->add_flag(
      kAllowOtherWorkload, o.allow_other_workload,
      "Gate against (or --pool into) a baseline of another campaign or configuration "
      "(config_hash): e.g. a "
      "deliberate slowdown set with --set, gated against the unchanged campaign's baseline");
  CLI::Option* cls = cmd->add_flag("--machine-class", o.machine_class,
                                   "Print the run's machine class (the name in "
                                   "results/baselines/<campaign>-<class>.json) and exit");
  baseline->excludes(cls);
  cmd->add_flag("--markdown", o.markdown, "Print a Markdown table");
  cmd->add_option("--match", o.match,
                  "What makes a case of the run a case of the baseline: config (config_hash, "
                  "the same campaign run again) or workload (workload_hash, the bytes written: "
                  "another campaign, target, backend or tuning of the same workload, gated "
                  "against the baseline without --allow-other-workload); --update-baseline "
                  "matches on config")
      ->check(CLI::IsMember({"config", "workload"}))
      ->capture_default_str();
  cmd->footer(
      std::string(kMethod) +
      "\n\nExit status: 0 nothing regressed (or the baseline was written); 1 a case regressed: its "
      "median ratio "
      "fell by more than the tolerance and p < alpha; 2 bad input: a command-line error, a missing "
      "or unreadable "
      "run or baseline, a run without calibration, a baseline of another machine class, campaign "
      "or "
      "configuration, a baseline too spread to detect the tolerance (each named, with the fix).");
  return cmd;
}

namespace {

int update_baseline(const GateCommandOptions& o, const RunRecord& run, const MachineClass& here,
                    std::ostream& out) {
  const std::filesystem::path file(o.baseline);
  std::error_code ec;
  const bool exists = std::filesystem::exists(file, ec);
  const Baseline previous = exists ? load_baseline(file) : Baseline{};
  if (o.pool && exists && previous.machine.name != here.name) {
    throw std::runtime_error(
        fmt::format("{}: taken on machine class {}, the run on {} - runs of different machines do "
                    "not pool; drop --pool to replace it, or pool into "
                    "results/baselines/<campaign>-{}.json",
                    file.string(), previous.machine.name, here.name, here.name));
  }
  if (exists && !o.allow_other_workload) {
    refuse_other_workload(run, run_ratios(run), previous, file,
                          o.pool ? BaselineUse::pool : BaselineUse::replace);
  }
  const Baseline updated = make_baseline(
      run, exists && previous.machine.name == here.name ? &previous : nullptr, o.pool);
  save_baseline(updated, file);
  fmt::print(out,
             "baseline {} {}: {} cases, machine class {} ({}, {} cores, {:.1f} GiB, {}), from {}\n",
             file.string(), exists ? (o.pool ? "pooled" : "updated") : "written",
             updated.cases.size(), here.name, here.cpu_model, here.cores,
             static_cast<double>(here.memory_bytes) / kGiB, here.file_system, run.file.string());
  return 0;
}

}  // namespace

int run_gate(const GateCommandOptions& o, std::ostream& out) {
  const RunRecord run = load_run(o.run);
  const MachineClass here =
      machine_class(run.cases.front().environment,
                    fmt::format("{}:{}", run.file.string(), run.cases.front().line));
  if (o.machine_class) {
    fmt::print(out, "{}\n", here.name);
    return 0;
  }
  if (o.baseline.empty())
    throw std::runtime_error("gate: --baseline FILE is required (results/baselines/<name>.json)");
  if (o.update_baseline) return update_baseline(o, run, here, out);
  const std::filesystem::path file(o.baseline);
  const Baseline baseline = load_baseline(file);
  if (baseline.machine.name != here.name) {
    throw std::runtime_error(
        fmt::format("{}: taken on machine class {}, the run on {} - ratios of different machines "
                    "do not compare; take a baseline "
                    "here with --update-baseline into results/baselines/<campaign>-{}.json",
                    file.string(), baseline.machine.name, here.name, here.name));
  }
  const std::vector<CaseRatios> ratios = run_ratios(run);
  const CaseMatch match = o.match == "workload" ? CaseMatch::workload : CaseMatch::config;
  if (!o.allow_other_workload)
    refuse_other_workload(run, ratios, baseline, file, BaselineUse::gate, match);
  const GateResult result =
      gate_run(ratios, baseline, o.tolerance, o.alpha, o.spread_factor, match);
  const std::vector<std::string> notes =
      refuse_blind_baseline(result, file, o.tolerance, o.spread_factor);
  print_gate(result, run, file, baseline, o.tolerance, o.alpha, o.spread_factor, o.markdown, out);
  for (const std::string& note : notes) out << note << '\n';
  return result.any_regressed() ? 1 : 0;
}

}  // namespace ckpt::harness
