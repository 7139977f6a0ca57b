#pragma once

#include <CLI/CLI.hpp>
#include <ostream>

namespace ckpt::harness {

struct BackendsOptions {
  bool json = false;
  bool markdown = false;
};

// `ckptbench backends`: every backend with its availability, options and capabilities.
CLI::App* add_backends_command(CLI::App& app, BackendsOptions& options);
void run_backends(const BackendsOptions& options, std::ostream& out);

}  // namespace ckpt::harness
