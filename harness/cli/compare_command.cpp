#include "harness/cli/compare_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <stdexcept>

#include "harness/report/compare.hpp"

namespace ckpt::harness {
namespace {

constexpr double kMinAlpha = 1e-9;
constexpr double kMaxAlpha = 0.5;
constexpr const char* kAllowFlag = "--allow-different-workloads";

// CLI::Range lets NaN through (every comparison with it is false), so the range is checked here.
CLI::Validator alpha_range() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        if (CLI::detail::lexical_cast(text, value) && std::isfinite(value) && value >= kMinAlpha &&
            value <= kMaxAlpha) {
          return "";
        }
        return fmt::format("must be a significance level from {} to {} (e.g. 0.05), got {}",
                           kMinAlpha, kMaxAlpha, text);
      },
      fmt::format("FLOAT in [{}, {}]", kMinAlpha, kMaxAlpha));
}

}  // namespace

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare two runs case by case: ratio of medians, Mann-Whitney U, verdict");
  cmd->add_option("BASE", o.base, "The baseline run (directory or results.jsonl)")->required();
  cmd->add_option("NEW", o.next, "The run to judge (directory or results.jsonl)")->required();
  cmd->add_option("--alpha", o.alpha, "Significance level of the two-sided test")
      ->check(alpha_range())
      ->capture_default_str();
  cmd->add_option("--fail-on", o.fail_on, "Exit 1 when any case is slower")
      ->check(CLI::IsMember({"slower"}));
  cmd->add_flag("--markdown", o.markdown, "Print a Markdown table");
  cmd->add_option("--match", o.match,
                  "What makes two cases one: config (config_hash, the same campaign run again) "
                  "or workload (workload_hash, the bytes written: another system, target, "
                  "backend or tuning, as MLPerf Storage compares)")
      ->check(CLI::IsMember({"config", "workload"}))
      ->capture_default_str();
  cmd->add_flag(kAllowFlag, o.allow_different_workloads,
                "Compare runs of different campaigns, or cases whose configuration (config_hash) "
                "differs — refused "
                "otherwise, since their numbers measure different workloads");
  cmd->footer(
      "Exit status: 0 compared; 1 with --fail-on slower: a case is slower (p < alpha and a lower "
      "median); 2 bad input: a "
      "command-line error, a run directory or results file that is missing or does not parse "
      "(path, line and key "
      "named), runs of different campaigns or workloads without --allow-different-workloads.");
  return cmd;
}

int run_compare(const CompareCommandOptions& o, std::ostream& out) {
  if (!(std::isfinite(o.alpha) && o.alpha >= kMinAlpha && o.alpha <= kMaxAlpha)) {
    throw std::runtime_error(
        fmt::format("--alpha must be a significance level from {} to {}, got {}", kMinAlpha,
                    kMaxAlpha, o.alpha));
  }
  const RunRecord base = load_run(o.base);
  const RunRecord next = load_run(o.next);
  const Comparison c = compare_runs(
      base, next, o.alpha, o.match == "workload" ? CaseMatch::workload : CaseMatch::config);
  const std::string difference = workload_difference(c, base, next);
  if (!difference.empty() && !o.allow_different_workloads) {
    throw std::runtime_error(
        fmt::format("{} — compare two runs of one campaign and configuration, or pass {} to "
                    "compare them anyway",
                    difference, kAllowFlag));
  }
  print_comparison(c, base, next, o.alpha, o.markdown, out);
  if (!difference.empty()) fmt::print(out, "compared anyway ({}): {}\n", kAllowFlag, difference);
  return o.fail_on == "slower" && c.any_slower() ? 1 : 0;
}

}  // namespace ckpt::harness
