#pragma once

#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "harness/run/case_result.hpp"

namespace ckpt::harness {

// The results of one run in a directory of its own, <root>/<campaign>-<UTC time>[-N] (never
// an existing one): results.jsonl (one object per case) and results.csv, each line flushed as
// the case finishes, so an interrupted run keeps what it measured.
class ResultsWriter {
 public:
  ResultsWriter(const std::filesystem::path& root, const std::string& campaign);
  void append(const CaseResult& result);
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::ofstream jsonl_;
  std::ofstream csv_;
};

// The console table: one row per case with its swept values and headline figures.
void print_results_table(std::ostream& out, const std::vector<CaseResult>& results);

// "strategy.mapping=file_per_rank backend.direct=true" (or "-" when nothing is swept).
std::string swept_label(const nlohmann::json& swept);

}  // namespace ckpt::harness
