#include "harness/cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <exception>

#include "harness/cli/backends_command.hpp"
#include "harness/cli/layout_command.hpp"
#include "harness/cli/models_command.hpp"
#include "harness/cli/run_command.hpp"

namespace ckpt::harness {

int run_cli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"ckptbench — checkpoint I/O benchmark and workload generator for large transformer models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ckptbench 0.1.0");
  LayoutOptions layout_options;
  ModelsOptions models_options;
  CLI::App* layout_cmd = add_layout_command(app, layout_options);
  CLI::App* models_cmd = add_models_command(app, models_options);
  RunOptions run_options;
  BackendsOptions backends_options;
  CLI::App* run_cmd = add_run_command(app, run_options);
  CLI::App* backends_cmd = add_backends_command(app, backends_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err);
  }
  try {
    if (layout_cmd->parsed()) run_layout(layout_options, out);
    if (models_cmd->parsed()) run_models(models_options, out);
    if (backends_cmd->parsed()) run_backends(backends_options, out);
    if (run_cmd->parsed()) return run_campaign(run_options, out, err);
  } catch (const std::exception& e) {
    err << "ckptbench: error: " << e.what() << '\n';
    return 2;
  }
  return 0;
}

}  // namespace ckpt::harness
