#include "harness/report/results_writer.hpp"

#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <stdexcept>

#include "harness/common/text_format.hpp"

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

std::string csv_field(std::string value) {
  if (value.find_first_of(",\"\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char ch : value) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string number_or_empty(const nlohmann::json& value) {
  return value.is_null() ? "" : fmt::format("{:.6g}", value.get<double>());
}

constexpr const char* kCsvHeader =
    "campaign,case_index,case,status,model,backend,strategy,ranks,modeled_ranks,bytes_per_checkpoint,"
    "files_per_checkpoint,write_gib_per_s,read_gib_per_s,write_seconds,read_seconds,verified,cache_policy,memory_space,"
    "d2h_seconds,h2d_seconds,error\n";

}  // namespace

std::string swept_label(const nlohmann::json& swept) {
  std::string label;
  for (const auto& [key, value] : swept.items()) {
    label += (label.empty() ? "" : " ") + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return label.empty() ? "-" : label;
}

ResultsWriter::ResultsWriter(const fs::path& root, const std::string& campaign) {
  const std::string base = campaign + "-" + utc_stamp();
  dir_ = root / base;
  for (int n = 2; fs::exists(dir_); ++n) dir_ = root / fmt::format("{}-{}", base, n);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error(fmt::format("--output: cannot create {}: {}", dir_.string(), ec.message()));
  jsonl_.open(dir_ / "results.jsonl");
  csv_.open(dir_ / "results.csv");
  if (!jsonl_ || !csv_) throw std::runtime_error(fmt::format("--output: cannot write into {}", dir_.string()));
  csv_ << kCsvHeader << std::flush;
}

void ResultsWriter::append(const CaseResult& result) {
  const nlohmann::json j = to_json(result);
  jsonl_ << j.dump() << '\n' << std::flush;
  csv_ << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(j["campaign"]),
                      j["case_index"].get<int>(), csv_field(swept_label(j["case"])), j["status"].get<std::string>(),
                      csv_field(j["model"]), csv_field(j["backend"]), j["strategy"].get<std::string>(),
                      j["ranks"].get<int>(), j["modeled_ranks"].get<std::int64_t>(),
                      j["bytes_per_checkpoint"].get<std::uint64_t>(), j["files_per_checkpoint"].get<std::uint64_t>(),
                      number_or_empty(j["write_gib_per_s"]), number_or_empty(j["read_gib_per_s"]),
                      number_or_empty(j["write_seconds"]), number_or_empty(j["read_seconds"]),
                      j["verified"].get<bool>() ? "true" : "false", csv_field(j["cache_policy"]),
                      j["memory_space"].get<std::string>(), number_or_empty(j["d2h_seconds"]),
                      number_or_empty(j["h2d_seconds"]), csv_field(result.error))
       << std::flush;
}

void print_results_table(std::ostream& out, const std::vector<CaseResult>& results) {
  std::size_t width = 4;
  for (const CaseResult& r : results) width = std::max(width, swept_label(r.config.swept).size());
  fmt::print(out, "\n{:>4}  {:<{}}  {:>11} {:>7}  {:>11} {:>11}  {:<8} {}\n", "case", "swept", width, "checkpoint", "files",
             "write GiB/s", "read GiB/s", "verified", "status");
  for (const CaseResult& r : results) {
    const auto rate = [](const std::optional<PhaseSummary>& p) {
      return p ? fmt::format("{:.3f}", p->gib_per_s) : std::string("-");
    };
    fmt::print(out, "{:>4}  {:<{}}  {:>11} {:>7}  {:>11} {:>11}  {:<8} {}\n", r.config.index,
               swept_label(r.config.swept), width, format_bytes(static_cast<std::int64_t>(r.bytes_per_checkpoint)),
               r.files_per_checkpoint, rate(r.write), rate(r.read), r.verified ? "yes" : "no",
               r.status == "ok" ? r.status : r.status + ": " + r.error);
  }
}

}  // namespace ckpt::harness
