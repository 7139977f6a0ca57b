#include "harness/cli/report_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <fstream>
#include <optional>
#include <stdexcept>

#include "harness/cli/projection_options.hpp"
#include "harness/report/html_report.hpp"
#include "harness/report/report_model.hpp"

namespace ckpt::harness {

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("report", "Tables and charts of one or more runs' results");
  cmd->add_option(
         "RUN", o.runs,
         "Run directories (holding results.jsonl) or results.jsonl files; several are concatenated")
      ->required();
  cmd->add_option(
      "--by", o.by,
      "Group the cases by this key (a swept key, any campaign key such as backend.name, or `run`)");
  cmd->add_option(
      "--baseline", o.baseline,
      "Speedups against the case with KEY=VALUE[,KEY=VALUE...], e.g. 'backend.name=posix'");
  cmd->add_flag("--markdown", o.markdown, "Print Markdown tables");
  cmd->add_option(
         "--html", o.html,
         "Also write one self-contained HTML file with inline SVG charts (no script, no network)")
      ->option_text("FILE");
  add_projection_options(cmd, o.projection);
  cmd->footer(
      "Projection: with any of --nodes, --storage-gib-per-s, --mtbf-hours, --mtbf-preset (an MTBF "
      "is needed) the report "
      "adds `ckptbench project`'s table and, in the HTML, its waste-against-interval charts; with "
      "--near-tier and --far-tier also the two-level intervals (best k and K, goodput).\n"
      "Exit status: 0 the report was printed (and written); 2 bad input: a command-line error, a "
      "run directory or results "
      "file that is missing or does not parse (path and line named), a --baseline or --by that "
      "matches no case, "
      "projection options `project` refuses, or a case without what a projection needs.");
  return cmd;
}

int run_report(const ReportCommandOptions& o, std::ostream& out) {
  std::vector<RunRecord> runs;
  for (const std::string& path : o.runs) runs.push_back(load_run(path));
  std::optional<ProjectionModel> projection;
  if (projection_requested(o.projection)) projection = build_projection(runs, o.projection);
  const ReportModel model = build_report(std::move(runs), {o.by, o.baseline});
  print_report(model, o.markdown, out);
  if (projection) {
    out << (o.markdown ? "\n## Projection to the full training job\n\n"
                       : "\nProjection to the full training job\n\n");
    print_projection(*projection, o.markdown, out);
    if (projection->tiers) print_tier_projection(*projection->tiers, o.markdown, out);
  }
  if (!o.html.empty()) {
    std::ofstream html(o.html, std::ios::binary | std::ios::trunc);
    html << html_report(model, projection ? &*projection : nullptr);
    html.close();
    if (!html) throw std::runtime_error("--html " + o.html + ": cannot be written");
    fmt::print(out, "\nHTML report: {}\n", o.html);
  }
  return 0;
}

}  // namespace ckpt::harness
