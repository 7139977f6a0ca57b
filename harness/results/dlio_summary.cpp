#include "harness/results/dlio_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "harness/common/elapsed.hpp"
#include "harness/results/dlio_metrics.hpp"
#include "harness/results/workload_hash.hpp"

namespace ckpt::harness {
namespace {

std::string trimmed(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

// The hosts in the order their first process appears.
std::vector<std::string> distinct_hosts(const std::vector<std::string>& hosts) {
  std::vector<std::string> out;
  for (const std::string& h : hosts) {
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  }
  return out;
}

// DLIO's metric keys of one phase: <prefix>_checkpoint_io_{mean,stdev}_GB_per_second (GiB/s, as
// DLIO's checkpoint_size is GiB) and <prefix>_checkpoint_duration_{mean,stdev}_seconds.
void add_phase(nlohmann::json& metric, const char* prefix, const DlioMetrics& m) {
  const std::string p = prefix;
  metric[p + "_checkpoint_io_mean_GB_per_second"] = m.mean_gib_per_s;
  metric[p + "_checkpoint_io_stdev_GB_per_second"] = m.stdev_gib_per_s;
  metric[p + "_checkpoint_duration_mean_seconds"] = m.mean_seconds;
  metric[p + "_checkpoint_duration_stdev_seconds"] = m.stdev_seconds;
}

}  // namespace

std::string dlio_time(std::chrono::system_clock::time_point t) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, ".%06lld", static_cast<long long>(micros % 1'000'000));
  return std::string(text) + fraction;
}

nlohmann::json proc_key_values(const std::string& path) {
  nlohmann::json out = nlohmann::json::object();
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos || line.find(':', colon + 1) != std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    if (key.empty() || key == "processor") continue;
    out[key] = trimmed(line.substr(colon + 1));
  }
  return out;
}

nlohmann::json dlio_summary_json(const CaseResult& r) {
  const std::vector<std::string> hosts = distinct_hosts(r.hosts);
  const std::size_t n = std::max<std::size_t>(hosts.size(), 1);
  // ckptbench records the cores and memory of process 0's host only: the others are 0.
  std::vector<std::int64_t> cores(n, 0);
  std::vector<double> memory_gib(n, 0.0);
  cores[0] = r.environment.value("cores", std::int64_t{0});
  memory_gib[0] = static_cast<double>(r.environment.value("memory_bytes", std::uint64_t{0})) / kGiB;
  // DLIO's data_size_per_host_GB is the training data a host reads (0 in a checkpointing run);
  // here it is what rule 4.3.1 compares with memory: one checkpoint's bytes per host.
  const double per_host_gib =
      static_cast<double>(r.bytes_per_checkpoint) / kGiB / static_cast<double>(n);
  std::vector<int> potential_caching;
  for (const double m : memory_gib) potential_caching.push_back(m > per_host_gib ? 1 : 0);
  nlohmann::json metric = nlohmann::json::object();
  if (r.write)
    add_phase(metric, "save",
              dlio_metrics(r.bytes_per_checkpoint, r.write->iteration_process0_seconds));
  if (r.read)
    add_phase(metric, "load",
              dlio_metrics(r.bytes_per_checkpoint, r.read->iteration_process0_seconds));
  metric["checkpoint_size_GB"] = static_cast<double>(r.bytes_per_checkpoint) / kGiB;
  const Case& c = r.config;
  return {{"start", dlio_time(r.started_at)},
          {"num_accelerators", r.modeled_ranks},
          {"num_hosts", hosts.size()},
          {"hostname", hosts.empty() ? r.environment.value("host", std::string()) : hosts[0]},
          {"metric", metric},
          {"num_files_train", 0},
          {"num_files_eval", 0},
          {"num_samples_per_file", 0},
          {"host_cpu_count", cores},
          {"host_processor_name", r.environment.value("machine", std::string())},
          {"potential_caching", potential_caching},
          {"host_cpuinfo", proc_key_values("/proc/cpuinfo")},
          {"host_meminfo", proc_key_values("/proc/meminfo")},
          {"host_memory_GB", memory_gib},
          {"data_size_per_host_GB", per_host_gib},
          {"epochs", 0},
          {"end", dlio_time(r.ended_at)},
          {"ckptbench",
           {{"campaign", c.campaign},
            {"case_index", c.index},
            {"mlperf_model", c.mlperf ? nlohmann::json(c.mlperf->model) : nlohmann::json(nullptr)},
            {"label", r.mlperf ? nlohmann::json(r.mlperf->label) : nlohmann::json(nullptr)},
            {"workload_hash", workload_hash(c)},
            {"storage", c.backend + " on " + r.environment.value("file_system", std::string("?"))},
            {"bytes_per_checkpoint", r.bytes_per_checkpoint},
            {"results", "results.jsonl"}}}};
}

}  // namespace ckpt::harness
