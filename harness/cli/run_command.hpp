#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli/run_progress.hpp"

namespace ckpt::harness {

struct RunOptions {
  std::string campaign;
  std::vector<std::string> overrides;  // --set KEY=VALUE
  std::string output = "results/runs";
  bool dry_run = false;
  std::string phase;          // "" = campaign.phase
  std::string units = "GiB";  // bandwidths in the summary table: GiB (2^30 B/s) or GB (10^9 B/s)
  int processes = 0;          // --dry-run --processes: plan for this many processes (0: this run's)
  Verbosity verbosity = Verbosity::normal;
};

CLI::App* add_run_command(CLI::App& app, RunOptions& options);

// Runs (or with --dry-run describes and checks) every case. Returns the exit status: 0 all cases
// ok and verified, 1 a case failed or did not verify, 2 bad input or a case that cannot start
// (the message on `err`; a dry run says what would fail), 130 interrupted.
int run_campaign(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ckpt::harness
