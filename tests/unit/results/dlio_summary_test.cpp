// The summary.json ckptbench writes for an [mlperf] case: DLIO's keys, DLIO's metric.
#include "harness/results/dlio_summary.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/campaign/campaign.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

TEST(DlioSummary, TimesAreDliosFormatInUtc) {
  using namespace std::chrono;
  const system_clock::time_point t{seconds(1784337856) + microseconds(352638)};
  EXPECT_EQ(dlio_time(t), "2026-07-18T01:24:16.352638");
  EXPECT_EQ(dlio_time(system_clock::time_point{seconds(1784337856)}), "2026-07-18T01:24:16.000000");
}

TEST(DlioSummary, ProcFilesAreReadAsDlioReadsThem) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("ckpt_proc_" + std::to_string(::getpid()));
  std::ofstream(file) << "processor\t: 0\nmodel name\t: first\nflags\t\t: a b\n\nprocessor\t: 1\n"
                         "model name\t: second\nno colon here\nk: v: w\nMemTotal:  1024 kB\n";
  EXPECT_EQ(proc_key_values(file.string()),
            (nlohmann::json{{"model name", "second"}, {"flags", "a b"}, {"MemTotal", "1024 kB"}}));
  std::filesystem::remove(file);
  EXPECT_EQ(proc_key_values("/nonexistent/proc/file"), nlohmann::json::object());
}

CaseResult eight_b_result() {
  const Campaign campaign =
      load_campaign(std::string(CKPT_SOURCE_DIR) + "/configs/mlperf/llama3-8b.toml", {});
  CaseResult r;
  r.config = campaign.cases.at(0);
  r.modeled_ranks = 8;
  r.bytes_per_checkpoint = 2 * kGiB;
  r.hosts = {"h1", "h1", "h2"};
  r.environment = {
      {"cores", 16}, {"memory_bytes", 8 * kGiB}, {"machine", "x86_64"}, {"file_system", "ext4"}};
  r.write.emplace();
  r.write->iteration_process0_seconds = {1.0, 2.0, 4.0};  // 2, 1 and 0.5 GiB/s
  r.read.emplace();
  r.read->iteration_process0_seconds = {2.0, 2.0};
  r.mlperf = MlperfVerdict{{}, {}, "non-compliant"};
  r.started_at = std::chrono::system_clock::time_point{std::chrono::seconds(1784337856)};
  r.ended_at = r.started_at + std::chrono::microseconds(9'002'303);
  return r;
}

TEST(DlioSummary, CarriesDliosMetricKeysAndTheHostsOfTheRun) {
  const nlohmann::json s = dlio_summary_json(eight_b_result());
  const nlohmann::json& m = s.at("metric");
  EXPECT_DOUBLE_EQ(m.at("save_checkpoint_io_mean_GB_per_second").get<double>(), 7.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.at("save_checkpoint_io_stdev_GB_per_second").get<double>(),
                   std::sqrt(7.0 / 18.0));
  EXPECT_DOUBLE_EQ(m.at("save_checkpoint_duration_mean_seconds").get<double>(), 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.at("save_checkpoint_duration_stdev_seconds").get<double>(),
                   std::sqrt(14.0) / 3.0);
  EXPECT_DOUBLE_EQ(m.at("load_checkpoint_io_mean_GB_per_second").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(m.at("load_checkpoint_io_stdev_GB_per_second").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(m.at("load_checkpoint_duration_mean_seconds").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(m.at("load_checkpoint_duration_stdev_seconds").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(m.at("checkpoint_size_GB").get<double>(), 2.0);
  EXPECT_EQ(m.size(), 9u);
  EXPECT_EQ(s.at("start"), "2026-07-18T01:24:16.000000");
  EXPECT_EQ(s.at("end"), "2026-07-18T01:24:25.002303");
  EXPECT_EQ(s.at("num_accelerators"), 8);
  EXPECT_EQ(s.at("num_hosts"), 2);
  EXPECT_EQ(s.at("hostname"), "h1");
  EXPECT_EQ(s.at("host_cpu_count"), (nlohmann::json{16, 0}));  // process 0's host only
  EXPECT_EQ(s.at("host_memory_GB"), (nlohmann::json{8.0, 0.0}));
  EXPECT_DOUBLE_EQ(s.at("data_size_per_host_GB").get<double>(), 1.0);
  EXPECT_EQ(s.at("potential_caching"), (nlohmann::json{1, 0}));
  EXPECT_EQ(s.at("host_processor_name"), "x86_64");
  EXPECT_EQ(s.at("epochs"), 0);
  EXPECT_EQ(s.at("ckptbench").at("mlperf_model"), "llama3-8b");
  EXPECT_EQ(s.at("ckptbench").at("label"), "non-compliant");
  EXPECT_EQ(s.at("ckptbench").at("storage"), "posix on ext4");
}

TEST(DlioSummary, APhaseThatDidNotRunHasNoKeys) {
  CaseResult r = eight_b_result();
  r.read.reset();
  const nlohmann::json m = dlio_summary_json(r).at("metric");
  EXPECT_TRUE(m.contains("save_checkpoint_io_mean_GB_per_second"));
  EXPECT_FALSE(m.contains("load_checkpoint_io_mean_GB_per_second"));
  EXPECT_EQ(m.size(), 5u);
}

}  // namespace
}  // namespace ckpt::harness
