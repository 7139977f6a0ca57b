#pragma once

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace ckpt::harness {

struct MlperfCommandOptions {
  // mlperf import
  std::vector<std::string> summaries;
  std::string id, organization, system, storage, division = "closed", model;
  // mlperf compare
  std::vector<std::string> runs;
  std::string table;
  std::vector<std::string> rows;
  bool markdown = false;
};

// `ckptbench mlperf import SUMMARY...`: one row of a published-results table made of DLIO
// summary.json files; `ckptbench mlperf compare RUN [RUN]`: an MLPerf run of ckptbench beside
// published rows.
CLI::App* add_mlperf_command(CLI::App& app, MlperfCommandOptions& options);
// Throws (exit 2) for files it cannot read and rows it cannot find.
int run_mlperf(const CLI::App& command, const MlperfCommandOptions& options, std::ostream& out);

}  // namespace ckpt::harness
