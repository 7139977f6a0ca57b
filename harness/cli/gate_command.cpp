#include "harness/cli/gate_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {

CLI::App* add_gate_command(CLI::App& app, GateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "gate", "Regression gate: each case's ratio to the calibration of the same run against a baseline's ratio");
  cmd->add_option("RUN", o.run, "A run with measure.calibration = true (directory or results.jsonl)")->required();
  CLI::Option* baseline = cmd->add_option("--baseline", o.baseline, "Baseline file (results/baselines/<name>.json)");
  cmd->add_option("--tolerance", o.tolerance, "Smallest change of the median ratio that counts, as a fraction (0.1 = 10 %)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--alpha", o.alpha, "Significance the Mann-Whitney test of the ratios must reach")
      ->check(CLI::Range(1e-9, 0.5))
      ->capture_default_str();
  cmd->add_option("--spread-factor", o.spread_factor,
                  fmt::format("A baseline pooled from {} runs or more: the tolerance is at least this many times the "
                              "largest deviation of one of its runs' median ratio from the pooled median",
                              kMinRunsForSpread))
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_flag("--update-baseline", o.update_baseline,
                "Write the run's ratios into the baseline file (created, or its matching cases replaced) instead of gating")
      ->needs(baseline);
  cmd->add_flag("--pool", o.pool,
                fmt::format("With --update-baseline: add the run to the baseline's matching cases as one more run (at most "
                            "{} kept) instead of replacing them; from {} runs on, their spread sets the tolerance",
                            kMaxPooledRuns, kMinRunsForSpread))
      ->needs("--update-baseline");
  CLI::Option* cls = cmd->add_flag("--machine-class", o.machine_class,
                                   "Print the run's machine class (the name in results/baselines/<campaign>-<class>.json) and exit");
  baseline->excludes(cls);
  cmd->add_flag("--markdown", o.markdown, "Print a Markdown table");
  cmd->footer(
      "Exit status: 0 nothing regressed (or the baseline was written); 1 a case regressed: its median ratio fell by more "
      "than the tolerance and p < alpha; 2 bad input: a command-line error, a missing or unreadable run or baseline, a "
      "run without calibration, a baseline of another machine class (each named, with the fix).");
  return cmd;
}

int run_gate(const GateCommandOptions& o, std::ostream& out) {
  const RunRecord run = load_run(o.run);
  const MachineClass here = machine_class(run.cases.front().environment,
                                          fmt::format("{}:{}", run.file.string(), run.cases.front().line));
  if (o.machine_class) {
    fmt::print(out, "{}\n", here.name);
    return 0;
  }
  if (o.baseline.empty()) throw std::runtime_error("gate: --baseline FILE is required (results/baselines/<name>.json)");
  const std::filesystem::path file(o.baseline);
  if (o.update_baseline) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(file, ec);
    const Baseline previous = exists ? load_baseline(file) : Baseline{};
    if (o.pool && exists && previous.machine.name != here.name) {
      throw std::runtime_error(fmt::format("{}: taken on machine class {}, the run on {} — runs of different machines do "
                                           "not pool; drop --pool to replace it, or pool into "
                                           "results/baselines/<campaign>-{}.json",
                                           file.string(), previous.machine.name, here.name, here.name));
    }
    const Baseline updated =
        make_baseline(run, exists && previous.machine.name == here.name ? &previous : nullptr, o.pool);
    save_baseline(updated, file);
    fmt::print(out, "baseline {} {}: {} cases, machine class {} ({}, {} cores, {:.1f} GiB, {}), from {}\n", file.string(),
               exists ? (o.pool ? "pooled" : "updated") : "written", updated.cases.size(), here.name, here.cpu_model, here.cores,
               static_cast<double>(here.memory_bytes) / kGiB, here.file_system, run.file.string());
    return 0;
  }
  const Baseline baseline = load_baseline(file);
  if (baseline.machine.name != here.name) {
    throw std::runtime_error(fmt::format(
        "{}: taken on machine class {}, the run on {} — ratios of different machines do not compare; take a baseline "
        "here with --update-baseline into results/baselines/<campaign>-{}.json",
        file.string(), baseline.machine.name, here.name, here.name));
  }
  const std::vector<CaseRatios> ratios = run_ratios(run);
  const GateResult result = gate_run(ratios, baseline, o.tolerance, o.alpha, o.spread_factor);
  print_gate(result, run, file, baseline, o.tolerance, o.alpha, o.spread_factor, o.markdown, out);
  return result.any_regressed() ? 1 : 0;
}

}  // namespace ckpt::harness
