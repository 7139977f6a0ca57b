#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "harness/report/reporter.hpp"

namespace ckpt::harness {

// The directory of one run's results, <root>/<campaign>-<UTC yyyymmdd-hhmmss>[-N] (never an
// existing one), created on first use: a run that ends before its first case leaves none.
class RunDirectory {
 public:
  RunDirectory(std::filesystem::path root, std::string campaign);
  // Why the directory could not be created under root ("" when it can be, as far as can be told
  // without creating anything): root, or its nearest existing ancestor, must be a writable
  // directory.
  std::string problem() const;
  // The directory, created on the first call. Throws std::runtime_error ("--output: …").
  const std::filesystem::path& path();
  bool created() const { return path_.has_value(); }

 private:
  std::filesystem::path root_;
  std::string campaign_;
  std::optional<std::filesystem::path> path_;
};

// One file of the run directory, one line per case (after a header line, if any), each
// flushed as its case ends. Opened, and the directory made, with the first result.
class ResultsFileReporter : public Reporter {
 public:
  void begin(const RunInfo& run) override;
  void add(const CaseResult& result) override;
  void end() override;

 protected:
  ResultsFileReporter(std::shared_ptr<RunDirectory> dir, std::string file, std::string header);
  virtual std::string line(const CaseResult& result) const = 0;  // without the newline

 private:
  std::shared_ptr<RunDirectory> dir_;
  std::string file_;
  std::string header_;
  std::ofstream out_;
};

// results.jsonl: one JSON object per case (results/SCHEMA.md).
class JsonlReporter final : public ResultsFileReporter {
 public:
  explicit JsonlReporter(std::shared_ptr<RunDirectory> dir);

 private:
  std::string line(const CaseResult& result) const override;
};

// results.csv: the headline columns of the same objects, a header line first.
class CsvReporter final : public ResultsFileReporter {
 public:
  explicit CsvReporter(std::shared_ptr<RunDirectory> dir);

 private:
  std::string line(const CaseResult& result) const override;
};

// DLIO's summary.json of each [mlperf] case that ended ok (`dlio_summary_json`):
// summary.json when the campaign has one such case, else case<N>_summary.json for case N (the
// rules find a run's summary by the pattern *summary.json).
class DlioSummaryReporter final : public Reporter {
 public:
  DlioSummaryReporter(std::shared_ptr<RunDirectory> dir, std::size_t mlperf_cases);
  void begin(const RunInfo&) override {}
  void add(const CaseResult& result) override;
  void end() override {}

 private:
  std::shared_ptr<RunDirectory> dir_;
  std::size_t mlperf_cases_;
};

// The summary's file name for case `index` of a campaign with `mlperf_cases` [mlperf] cases.
std::string dlio_summary_name(std::int64_t index, std::size_t mlperf_cases);

// One CSV row (no newline) of a case, in the columns of csv_header().
std::string csv_row(const CaseResult& result);
std::string csv_header();

}  // namespace ckpt::harness
