#include "harness/cli/project_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <fstream>
#include <stdexcept>

#include "harness/cli/projection_options.hpp"
#include "harness/report/projection.hpp"

namespace ckpt::harness {

CLI::App* add_project_command(CLI::App& app, ProjectCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "project",
      "Project each case's measured node share to the full training "
      "job: checkpoint and restore time, optimal "
      "interval (Young, Daly) and the share of training time lost; with --near-tier and "
      "--far-tier the best two-level intervals (k, K) and their "
      "goodput, analytic and by Monte Carlo");
  cmd->add_option(
      "RUN", o.runs,
      "Run directories (holding results.jsonl) or results.jsonl files (none: both tiers "
      "given as numbers)");
  add_projection_options(cmd, o.projection);
  cmd->add_flag("--markdown", o.markdown, "Print a Markdown table");
  cmd->add_option(
         "--html", o.html,
         "Also write one self-contained HTML file: the table and waste-against-interval charts")
      ->option_text("FILE");
  cmd->footer(
      "Exit status: 0 projected; 2 bad input: a command-line error, a run that is missing or does "
      "not parse, a case without "
      "what a projection needs (field and fix named), MTBF or bandwidth not positive, no MTBF "
      "given, a tier missing or nonsensical (NaN, negative, a spec matching no case).");
  return cmd;
}

int run_project(const ProjectCommandOptions& o, std::ostream& out) {
  if (o.runs.empty() && !o.projection.tiers.requested()) {
    throw std::runtime_error(
        "project needs RUN (run directories or results.jsonl files), or --near-tier and "
        "--far-tier given as numbers");
  }
  std::vector<RunRecord> runs;
  for (const std::string& path : o.runs) runs.push_back(load_run(path));
  const ProjectionModel model = build_projection(std::move(runs), o.projection);
  if (!model.cases.empty()) print_projection(model, o.markdown, out);
  if (model.tiers) print_tier_projection(*model.tiers, o.markdown, out);
  if (!o.html.empty()) {
    std::ofstream html(o.html, std::ios::binary | std::ios::trunc);
    html << projection_html(model);
    html.close();
    if (!html) throw std::runtime_error("--html " + o.html + ": cannot be written");
    fmt::print(out, "\nHTML projection: {}\n", o.html);
  }
  return 0;
}

}  // namespace ckpt::harness
