#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/projection.hpp"

namespace ckpt::harness {

struct ProjectCommandOptions {
  std::vector<std::string> runs;  // run directories or results.jsonl files
  ProjectionOptions projection;   // add_projection_options declares them
  bool markdown = false;
  std::string html;  // --html FILE ("" none)
};

// `ckptbench project RUN…`: each case's measured node share projected to the full training job
// (checkpoint and restore time, optimal interval, expected waste).
CLI::App* add_project_command(CLI::App& app, ProjectCommandOptions& options);
// Returns 0; throws std::runtime_error (exit 2) for unreadable input, a case that lacks what a
// projection needs, or a nonsensical option.
int run_project(const ProjectCommandOptions& options, std::ostream& out);

}  // namespace ckpt::harness
