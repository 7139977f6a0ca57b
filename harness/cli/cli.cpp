#include "harness/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cli/backends_command.hpp"
#include "harness/cli/codec_command.hpp"
#include "harness/cli/compare_command.hpp"
#include "harness/cli/gate_command.hpp"
#include "harness/cli/keys_command.hpp"
#include "harness/cli/layout_command.hpp"
#include "harness/cli/load_command.hpp"
#include "harness/cli/mlperf_command.hpp"
#include "harness/cli/models_command.hpp"
#include "harness/cli/project_command.hpp"
#include "harness/cli/report_command.hpp"
#include "harness/cli/run_command.hpp"
#include "harness/cli/version.hpp"
#include "harness/common/suggest.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kExitStatus =
    "Exit status: 0 every case ok (and verified where it could be); 1 a case failed or did not "
    "verify; 2 bad "
    "input: a command-line error, a campaign or model file error, or a case that cannot start; 130 "
    "interrupted "
    "(SIGINT or SIGTERM).";

// The first word of the command line that is no option: the subcommand the user meant. The
// global options take no values, so every word before it starts with '-'.
std::optional<std::string> first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (!arg.starts_with('-')) return std::string(arg);
  }
  return std::nullopt;
}

// A command-line error: one "ckptbench: error: …" line and where to find the options; exit 2.
int command_line_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv,
                       std::ostream& err) {
  std::vector<std::string> names;
  std::string list;
  std::string help = "ckptbench --help";
  for (const CLI::App* sub : app.get_subcommands({})) {
    names.push_back(sub->get_name());
    list += (list.empty() ? "" : ", ") + sub->get_name();
    if (sub->parsed()) help = "ckptbench " + sub->get_name() + " --help";
  }
  std::string message = e.what();
  const std::optional<std::string> word = first_word(argc, argv);
  if (!word) {
    message = "a subcommand is required: " + list;
  } else if (std::find(names.begin(), names.end(), *word) == names.end()) {
    message = "unknown subcommand `" + *word + "`";
    std::string hint = did_you_mean(*word, names);
    const auto starting = std::count_if(names.begin(), names.end(),
                                        [&](const std::string& n) { return n.starts_with(*word); });
    const auto prefixed = std::find_if(names.begin(), names.end(),
                                       [&](const std::string& n) { return n.starts_with(*word); });
    if (hint.empty() && starting == 1) hint = " — did you mean `" + *prefixed + "`?";
    message += hint.empty() ? " (subcommands: " + list + ")" : hint;
  }
  err << "ckptbench: error: " << message << "\nRun `" << help << "` for the options.\n";
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{
      "ckptbench — checkpoint I/O benchmark and workload generator for large transformer models"};
  app.require_subcommand(1);
  app.fallthrough();  // -q and -v may also follow the subcommand
  app.set_version_flag(
      "--version", [] { return version_text(); },
      "Print the version, the backends and memory spaces this build has, and library versions");
  bool quiet = false;
  bool verbose = false;
  CLI::Option* quiet_flag =
      app.add_flag("-q,--quiet", quiet, "Print only errors and the result table (no progress)");
  app.add_flag("-v,--verbose", verbose, "Also print each iteration's write, read and verify times")
      ->excludes(quiet_flag);
  LayoutOptions layout_options;
  ModelsOptions models_options;
  CLI::App* layout_cmd = add_layout_command(app, layout_options);
  CLI::App* models_cmd = add_models_command(app, models_options);
  RunOptions run_options;
  BackendsOptions backends_options;
  CLI::App* run_cmd = add_run_command(app, run_options);
  CLI::App* backends_cmd = add_backends_command(app, backends_options);
  KeysOptions keys_options;
  CLI::App* keys_cmd = add_keys_command(app, keys_options);
  ReportCommandOptions report_options;
  CLI::App* report_cmd = add_report_command(app, report_options);
  CompareCommandOptions compare_options;
  CLI::App* compare_cmd = add_compare_command(app, compare_options);
  GateCommandOptions gate_options;
  CLI::App* gate_cmd = add_gate_command(app, gate_options);
  ProjectCommandOptions project_options;
  CLI::App* project_cmd = add_project_command(app, project_options);
  LoadCommandOptions load_options;
  CLI::App* load_cmd = add_load_command(app, load_options);
  MlperfCommandOptions mlperf_options;
  CLI::App* mlperf_cmd = add_mlperf_command(app, mlperf_options);
  CodecCommandOptions codec_options;
  CLI::App* codec_cmd = add_codec_command(app, codec_options);
  app.footer(kExitStatus);
  for (CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_footer().empty())
      sub->footer(kExitStatus);  // report, compare and gate state their own
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    return command_line_error(app, e, argc, argv, err);
  }
  run_options.verbosity = quiet     ? Verbosity::quiet
                          : verbose ? Verbosity::verbose
                                    : Verbosity::normal;
  try {
    if (layout_cmd->parsed()) run_layout(layout_options, out);
    if (models_cmd->parsed()) run_models(models_options, out);
    if (backends_cmd->parsed()) run_backends(backends_options, out);
    if (keys_cmd->parsed()) run_keys(keys_options, out);
    if (run_cmd->parsed()) return run_campaign(run_options, out, err);
    if (report_cmd->parsed()) return run_report(report_options, out);
    if (compare_cmd->parsed()) return run_compare(compare_options, out);
    if (gate_cmd->parsed()) return run_gate(gate_options, out);
    if (project_cmd->parsed()) return run_project(project_options, out);
    if (load_cmd->parsed()) return run_load(load_options, out, err);
    if (mlperf_cmd->parsed()) return run_mlperf(*mlperf_cmd, mlperf_options, out);
    if (codec_cmd->parsed()) return run_codec(codec_options, out);
  } catch (const std::exception& e) {
    err << "ckptbench: error: " << e.what() << '\n';
    return 2;
  }
  return 0;
}

}  // namespace ckpt::harness
