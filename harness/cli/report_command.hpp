#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/projection.hpp"

namespace ckpt::harness {

struct ReportCommandOptions {
  std::vector<std::string> runs;  // run directories or results.jsonl files
  std::string by;
  std::string baseline;
  bool markdown = false;
  std::string html;              // --html FILE ("" none)
  ProjectionOptions projection;  // any given: the report adds `project`'s section
};

// `ckptbench report RUN…`: tables (text or Markdown) and optionally one self-contained HTML file.
CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& options);
// Returns 0; throws std::runtime_error (exit 2) for input it cannot read, naming path and line.
int run_report(const ReportCommandOptions& options, std::ostream& out);

}  // namespace ckpt::harness
