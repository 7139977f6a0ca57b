#include "harness/cli/compare_command.hpp"

#include "harness/report/compare.hpp"

namespace ckpt::harness {

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("compare", "Compare two runs case by case: ratio of medians, Mann-Whitney U, verdict");
  cmd->add_option("BASE", o.base, "The baseline run (directory or results.jsonl)")->required();
  cmd->add_option("NEW", o.next, "The run to judge (directory or results.jsonl)")->required();
  cmd->add_option("--alpha", o.alpha, "Significance level of the two-sided test")
      ->check(CLI::Range(1e-9, 0.5))
      ->capture_default_str();
  cmd->add_option("--fail-on", o.fail_on, "Exit 1 when any case is slower")->check(CLI::IsMember({"slower"}));
  cmd->add_flag("--markdown", o.markdown, "Print a Markdown table");
  cmd->footer(
      "Exit status: 0 compared; 1 with --fail-on slower: a case is slower (p < alpha and a lower median); 2 bad input: a "
      "command-line error, a run directory or results file that is missing or does not parse (path and line named).");
  return cmd;
}

int run_compare(const CompareCommandOptions& o, std::ostream& out) {
  const RunRecord base = load_run(o.base);
  const RunRecord next = load_run(o.next);
  const Comparison c = compare_runs(base, next, o.alpha);
  print_comparison(c, base, next, o.alpha, o.markdown, out);
  return o.fail_on == "slower" && c.any_slower() ? 1 : 0;
}

}  // namespace ckpt::harness
