#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "harness/report/gate.hpp"

namespace ckpt::harness {

struct GateCommandOptions {
  std::string run;
  std::string baseline;
  double tolerance = kDefaultGateTolerance;
  double alpha = kGateAlpha;
  double spread_factor = kSpreadFactor;
  bool update_baseline = false;
  bool pool = false;
  bool allow_other_workload = false;
  bool machine_class = false;
  bool markdown = false;
  std::string match = "config";  // config | workload: what makes a run's case a baseline's
};

// `ckptbench gate RUN --baseline FILE`: each case's ratio to its same-run calibration against
// the baseline's, a verdict per case and direction.
CLI::App* add_gate_command(CLI::App& app, GateCommandOptions& options);
// 0 nothing regressed (or the baseline was written, or the class printed), 1 something
// regressed; throws std::runtime_error (exit 2) for input it cannot use.
int run_gate(const GateCommandOptions& options, std::ostream& out);

}  // namespace ckpt::harness
