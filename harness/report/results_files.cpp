#include "harness/report/results_files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "harness/common/directories.hpp"
#include "harness/report/report_format.hpp"
#include "harness/results/dlio_summary.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

std::string utc_stamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &utc);
  return text;
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char ch : value) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

// A JSON value as a cell: strings as they are, numbers with 6 significant digits, null empty.
std::string cell(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return csv_field(value.get<std::string>());
  if (value.is_number_float()) return fmt::format("{:.6g}", value.get<double>());
  return value.dump();
}

// The columns, each a key of the results.jsonl object (environment keys by JSON pointer).
const std::vector<std::pair<const char*, nlohmann::json::json_pointer>>& columns() {
  using P = nlohmann::json::json_pointer;
  static const std::vector<std::pair<const char*, P>> kColumns{
      {"campaign", P("/campaign")},
      {"case_index", P("/case_index")},
      {"case", P("/case")},
      {"status", P("/status")},
      {"model", P("/model")},
      {"backend", P("/backend")},
      {"strategy", P("/strategy")},
      {"ranks", P("/ranks")},
      {"modeled_ranks", P("/modeled_ranks")},
      {"bytes_per_checkpoint", P("/bytes_per_checkpoint")},
      {"files_per_checkpoint", P("/files_per_checkpoint")},
      {"write_gib_per_s", P("/write_gib_per_s")},
      {"read_gib_per_s", P("/read_gib_per_s")},
      {"write_seconds", P("/write_seconds")},
      {"read_seconds", P("/read_seconds")},
      {"verified", P("/verified")},
      {"cache_policy", P("/cache_policy")},
      {"memory_space", P("/memory_space")},
      {"d2h_seconds", P("/d2h_seconds")},
      {"h2d_seconds", P("/h2d_seconds")},
      {"load_method", P("/load/method")},
      {"load_tp", P("/load/tp")},
      {"load_requests", P("/load/requests")},
      {"scale", P("/scale")},
      {"iterations", P("/iterations")},
      {"host", P("/environment/host")},
      {"time_utc", P("/environment/time_utc")},
      {"config_hash", P("/config_hash")},
      {"error", P("/error")}};
  return kColumns;
}

}  // namespace

RunDirectory::RunDirectory(fs::path root, std::string campaign)
    : root_(std::move(root)), campaign_(std::move(campaign)) {}

std::string RunDirectory::problem() const {
  const fs::path root = root_.empty() ? fs::path(".") : root_;
  if (const auto blocking = uncreatable_directory(root)) {
    return fmt::format(
        "--output: cannot make the results directory under {}: {} is not a writable directory",
        root.string(), blocking->string());
  }
  return "";
}

const fs::path& RunDirectory::path() {
  if (path_) return *path_;
  const std::string base = campaign_ + "-" + utc_stamp();
  fs::path dir = root_ / base;
  for (int n = 2; fs::exists(dir); ++n) dir = root_ / fmt::format("{}-{}", base, n);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("--output: cannot create {}: {}", dir.string(), ec.message()));
  return path_.emplace(std::move(dir));
}

std::string csv_header() {
  std::string line;
  for (const auto& [name, pointer] : columns())
    line += (line.empty() ? "" : ",") + std::string(name);
  return line;
}

std::string csv_row(const CaseResult& result) {
  const nlohmann::json j = to_json(result);
  std::string line;
  bool first = true;
  for (const auto& [name, pointer] : columns()) {
    const std::string text = std::string_view(name) == "case"
                                 ? csv_field(swept_label(j.at(pointer)))
                                 : cell(j.value(pointer, nlohmann::json()));
    line += (first ? "" : ",") + text;
    first = false;
  }
  return line;
}

ResultsFileReporter::ResultsFileReporter(std::shared_ptr<RunDirectory> dir, std::string file,
                                         std::string header)
    : dir_(std::move(dir)), file_(std::move(file)), header_(std::move(header)) {}

void ResultsFileReporter::begin(const RunInfo&) {
  if (const std::string problem = dir_->problem(); !problem.empty())
    throw std::runtime_error(problem);
}

void ResultsFileReporter::add(const CaseResult& result) {
  const std::string text = line(result);
  const fs::path file = dir_->path() / file_;
  if (!out_.is_open()) {
    out_.open(file);
    if (!header_.empty()) out_ << header_ << '\n';
  }
  out_ << text << '\n' << std::flush;
  if (!out_) throw std::runtime_error(fmt::format("--output: cannot write {}", file.string()));
}

void ResultsFileReporter::end() {
  if (out_.is_open()) out_.close();
}

JsonlReporter::JsonlReporter(std::shared_ptr<RunDirectory> dir)
    : ResultsFileReporter(std::move(dir), "results.jsonl", "") {}

std::string JsonlReporter::line(const CaseResult& result) const {
  return to_json(result).dump();
}

CsvReporter::CsvReporter(std::shared_ptr<RunDirectory> dir)
    : ResultsFileReporter(std::move(dir), "results.csv", csv_header()) {}

std::string CsvReporter::line(const CaseResult& result) const {
  return csv_row(result);
}

std::string dlio_summary_name(std::int64_t index, std::size_t mlperf_cases) {
  return mlperf_cases == 1 ? std::string("summary.json")
                           : fmt::format("case{}_summary.json", index);
}

DlioSummaryReporter::DlioSummaryReporter(std::shared_ptr<RunDirectory> dir,
                                         std::size_t mlperf_cases)
    : dir_(std::move(dir)), mlperf_cases_(mlperf_cases) {}

void DlioSummaryReporter::add(const CaseResult& result) {
  if (!result.config.mlperf || result.status != "ok" || (!result.write && !result.read)) return;
  const fs::path file = dir_->path() / dlio_summary_name(result.config.index, mlperf_cases_);
  std::ofstream out(file);
  out << dlio_summary_json(result).dump(4) << '\n';
  if (!out) throw std::runtime_error(fmt::format("--output: cannot write {}", file.string()));
}

}  // namespace ckpt::harness
