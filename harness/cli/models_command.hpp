#pragma once

#include <CLI/CLI.hpp>
#include <ostream>

namespace ckpt::harness {

struct ModelsOptions {
  bool json = false;
};

// `ckptbench models`: the model zoo with parameter counts.
CLI::App* add_models_command(CLI::App& app, ModelsOptions& options);
void run_models(const ModelsOptions& options, std::ostream& out);

}  // namespace ckpt::harness
