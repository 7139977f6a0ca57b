#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

namespace ckpt::harness {

struct CompareCommandOptions {
  std::string base;
  std::string next;
  double alpha = 0.05;
  std::string fail_on;  // "slower" or ""
  bool markdown = false;
  bool allow_different_workloads = false;  // compare runs of other campaigns or workloads
  std::string match = "config";            // config | workload: what makes two cases one
};

// `ckptbench compare BASE NEW`: per matched case the ratio of medians, a Mann–Whitney p-value
// and a verdict.
CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& options);
// Returns 1 with --fail-on slower when a case is slower, else 0; throws std::runtime_error
// (exit 2) for input it cannot read, an alpha outside its range, and runs that measure different
// workloads (without allow_different_workloads).
int run_compare(const CompareCommandOptions& options, std::ostream& out);

}  // namespace ckpt::harness
