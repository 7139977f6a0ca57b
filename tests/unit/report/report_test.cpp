// Reporters on constructed results: the summary table's exact text (median [min–max], GiB/s and
// GB/s, the dash for a backend that stores nothing, the model.scale note, the wall-time lines, the
// verdict line),
// the CSV columns, the run directory that appears only with the first result, and the
// provenance helpers (shell quoting, config_hash without the target).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/report/console_reporter.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_model.hpp"
#include "harness/report/results_files.hpp"
#include "harness/report/run_input.hpp"
#include "harness/results/environment.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

PhaseSummary phase(std::vector<double> seconds, double median) {
  PhaseSummary p;
  p.iteration_seconds = std::move(seconds);
  p.seconds = median;
  p.gib_per_s = static_cast<double>(kGiBBytes) / median / static_cast<double>(kGiBBytes);
  return p;
}

CaseResult result(std::int64_t index, const std::string& mapping, std::uint64_t files) {
  CaseResult r;
  r.config.campaign = "table";
  r.config.index = index;
  r.config.swept = {{"strategy.mapping", mapping}};
  r.config.scale = 128;
  r.bytes_per_checkpoint = kGiBBytes;
  r.files_per_checkpoint = files;
  return r;
}

// Three cases: three iterations each way (1 GiB in 1, 0.5 and 2 s; read in 0.25, 0.25, 0.5 s);
// one failed case that wrote once and never restored; one case of the null backend.
std::vector<CaseResult> three_cases() {
  CaseResult a = result(0, "file_per_tensor", 291);
  a.write = phase({1.0, 0.5, 2.0}, 1.0);
  a.read = phase({0.25, 0.25, 0.5}, 0.25);
  a.verified = true;
  a.wall.seconds = 10;
  a.wall.parts = {
      {"setup", 0.25}, {"fill", 0.125}, {"checkpoint", 4.5}, {"retire", 1.5}, {"restore", 1}};
  CaseResult b = result(1, "shared_file", 1);
  b.write = phase({0.1}, 0.1);
  b.status = "failed";
  b.error = "boom";
  b.wall.seconds = 2;
  b.wall.parts = {{"setup", 0.5}, {"checkpoint", 0.1}};
  CaseResult c = result(2, "file_per_rank", 1);
  c.config.backend = "null";
  c.stores_data = false;
  c.write = phase({0.001, 0.002}, 0.0015);
  c.read = phase({0.001, 0.001}, 0.001);
  c.wall.seconds = 0.5;
  c.wall.parts = {{"setup", 0.5}};
  return {a, b, c};
}

std::string summary(const std::vector<CaseResult>& results, BandwidthUnit unit) {
  std::ostringstream out;
  print_summary(out, results, unit);
  return out.str();
}

TEST(SummaryTable, MedianAndRangeInGibPerSecond) {
  EXPECT_EQ(
      summary(three_cases(), BandwidthUnit::gib),
      "\n"
      "case  swept                             checkpoint  files       write GiB/s        read "
      "GiB/s  verified  status\n"
      "   0  strategy.mapping=file_per_tensor    1.00 GiB    291  1.00 [0.50–2.00]  4.00 "
      "[2.00–4.00]  yes       ok\n"
      "   1  strategy.mapping=shared_file        1.00 GiB      1              10.0                 "
      "-  no        failed: boom\n"
      "   2  strategy.mapping=file_per_rank      1.00 GiB      1                 —                 "
      "—  no        ok\n"
      "\n"
      "write and read: median [min–max] over the timed iterations; GiB/s = 2^30 bytes/s\n"
      "model.scale = 128: shards 1/128 of full size\n"
      "—: backend null stores nothing; its times measure the harness's own overhead\n"
      "case 0: phases cover 73.7% of the 10.0 s wall time (setup 0.250 s, fill 0.125 s, checkpoint "
      "4.50 s, "
      "retire 1.50 s, restore 1.00 s)\n"
      "case 1: phases cover 30.0% of the 2.00 s wall time (setup 0.500 s, checkpoint 0.100 s)\n"
      "case 2: phases cover 100.0% of the 0.500 s wall time (setup 0.500 s)\n"
      "summary: strategy.mapping=file_per_tensor writes 1.00 GiB/s and reads 4.00 GiB/s (medians). "
      "1 "
      "of 3 cases failed (see the status column).\n");
}

// 2^30 bytes per second is 1.073741824 GB/s: 1.07, 0.54 and 2.15 for the write; 4.29 and 2.15 for
// the read.
TEST(SummaryTable, IntegrityWarningsArePrintedAndReportedPerCase) {
  CaseResult a = result(0, "file_per_rank", 1);
  a.write = phase({1.0}, 1.0);
  a.integrity.preload.ld_preload = "/tmp/shim.so";
  const std::string warning =
      "LD_PRELOAD is set (/tmp/shim.so): a preloaded library can change what the I/O calls do";
  EXPECT_NE(summary({a}, BandwidthUnit::gib).find("case 0: integrity warning: " + warning + "\n"),
            std::string::npos);
  RunRecord run;
  run.name = "run";
  run.cases.push_back(parse_case(to_json(a), {"results.jsonl", 1, ""}));
  EXPECT_EQ(run.cases[0].integrity_warnings, std::vector<std::string>{warning});
  std::ostringstream text;
  print_report(build_report({run}, {}), false, text);
  EXPECT_NE(text.str().find("Integrity warnings"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(warning), std::string::npos) << text.str();
}

TEST(SummaryTable, DecimalGigabytesPerSecond) {
  std::vector<CaseResult> results = three_cases();
  for (CaseResult& r : results) r.config.scale = 1;
  EXPECT_EQ(
      summary(results, BandwidthUnit::gb),
      "\n"
      "case  swept                             checkpoint  files        write GB/s         read "
      "GB/s  verified  status\n"
      "   0  strategy.mapping=file_per_tensor    1.00 GiB    291  1.07 [0.54–2.15]  4.29 "
      "[2.15–4.29]  yes       ok\n"
      "   1  strategy.mapping=shared_file        1.00 GiB      1              10.7                 "
      "-  no        failed: boom\n"
      "   2  strategy.mapping=file_per_rank      1.00 GiB      1                 —                 "
      "—  no        ok\n"
      "\n"
      "write and read: median [min–max] over the timed iterations; GB/s = 10^9 bytes/s\n"
      "—: backend null stores nothing; its times measure the harness's own overhead\n"
      "case 0: phases cover 73.7% of the 10.0 s wall time (setup 0.250 s, fill 0.125 s, checkpoint "
      "4.50 s, "
      "retire 1.50 s, restore 1.00 s)\n"
      "case 1: phases cover 30.0% of the 2.00 s wall time (setup 0.500 s, checkpoint 0.100 s)\n"
      "case 2: phases cover 100.0% of the 0.500 s wall time (setup 0.500 s)\n"
      "summary: strategy.mapping=file_per_tensor writes 1.07 GB/s and reads 4.29 GB/s (medians). 1 "
      "of "
      "3 cases failed (see the status column).\n");
}

// A [training] case has no timed write iterations: its write column is the flush bandwidth,
// median [min–max] over the committed checkpoints (the uncommitted one left out).
TEST(SummaryTable, TrainingCasesShowTheirFlushBandwidth) {
  CaseResult t = result(0, "file_per_rank", 8);
  t.config.scale = 1;
  t.verified = true;
  TrainingSummary s;
  for (const auto& [gib_s, committed] :
       {std::pair{1.0, true}, std::pair{4.0, true}, std::pair{2.0, true}, std::pair{9.0, false}}) {
    s.checkpoints.push_back({.stall_seconds = 0.5,
                             .time_to_durable_seconds = 2,
                             .flush_gib_s = gib_s,
                             .committed = committed});
  }
  s.committed_iteration = 5;
  t.training = s;
  const std::string table = summary({t}, BandwidthUnit::gib);
  EXPECT_NE(table.find("      8  2.00 [1.00–4.00]           -    0.500       2.00  yes       ok\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("write of a [training] case: its flush bandwidth"), std::string::npos)
      << table;
}

TEST(SummaryTable, ScalesThatDifferAreListed) {
  std::vector<CaseResult> results = three_cases();
  results[1].config.scale = 1;
  EXPECT_NE(summary(results, BandwidthUnit::gib)
                .find("\nmodel.scale differs per case (1, 128): shards 1/scale of full size\n"),
            std::string::npos);
}

TEST(BandwidthCell, ConversionIsExact) {
  CaseResult r = result(0, "x", 1);
  r.bytes_per_checkpoint = 1'000'000'000;
  r.write = phase({1.0}, 1.0);
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gb), "1.00");
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gib), "0.931");  // 10^9 / 2^30 = 0.9313…
  r.bytes_per_checkpoint = kGiBBytes;
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gib), "1.00");
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gb), "1.07");
  r.bytes_per_checkpoint = 125'472'832;  // the quickstart checkpoint
  r.write = phase({1.0, 4.0, 0.5}, 1.0);
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gib), "0.117 [0.029–0.234]");
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gb), "0.125 [0.031–0.251]");
  EXPECT_EQ(unit_bytes(BandwidthUnit::gib), 1073741824.0);
  EXPECT_EQ(unit_bytes(BandwidthUnit::gb), 1e9);
  EXPECT_EQ(bandwidth_cell(r, std::nullopt, BandwidthUnit::gib), "-");
  r.stores_data = false;
  EXPECT_EQ(bandwidth_cell(r, r.write, BandwidthUnit::gib), "—");
}

TEST(BandwidthCell, ThreeSignificantDigits) {
  EXPECT_EQ(format_significant(0.1023), "0.102");
  EXPECT_EQ(format_significant(1.008), "1.01");
  EXPECT_EQ(format_significant(12.345), "12.3");
  EXPECT_EQ(format_significant(123.4), "123");
  EXPECT_EQ(format_significant(70901.2), "70901");
  EXPECT_EQ(format_significant(0.0000004), "0.000000");
  EXPECT_EQ(format_significant(0), "0");
  EXPECT_EQ(display_width("1.00 [0.50–2.00]"), 16u);
  EXPECT_EQ(pad_left("—", 3), "  —");
}

TEST(WallTime, PartsAddUpAndRepeatOntoTheirPart) {
  WallTime w;
  w.seconds = 4;
  w.add("checkpoint", 1);
  w.add("retire", 0.5);
  w.add("checkpoint", 1.5);
  ASSERT_EQ(w.parts.size(), 2u);
  EXPECT_EQ(w.parts[0], (std::pair<std::string, double>{"checkpoint", 2.5}));
  EXPECT_EQ(w.covered(), 3.0);
  EXPECT_EQ(w.covered_percent(), 75.0);
  EXPECT_EQ(WallTime{}.covered_percent(), 0.0);
}

TEST(CsvReporter, ColumnsAndOneRow) {
  EXPECT_EQ(
      csv_header(),
      "campaign,case_index,case,status,model,backend,strategy,ranks,modeled_ranks,bytes_per_"
      "checkpoint,"
      "files_per_checkpoint,write_gib_per_s,read_gib_per_s,write_seconds,read_seconds,verified,"
      "cache_policy,"
      "memory_space,d2h_seconds,h2d_seconds,load_method,load_tp,load_requests,scale,iterations,"
      "host,time_utc,"
      "config_hash,error");
  CaseResult r = three_cases()[1];
  r.config.model.name = "llama3-8b";
  r.error = "boom, at byte 3";
  r.environment = {{"host", "node7"}, {"time_utc", "2026-12-01T10:00:00Z"}};
  EXPECT_EQ(csv_row(r),
            "table,1,strategy.mapping=shared_file,failed,llama3-8b,posix,file_per_rank,1,0,"
            "1073741824,1,10,,"
            "0.1,,false,,host,,,,,,128,3,node7,2026-12-01T10:00:00Z," +
                config_hash(r.config) + ",\"boom, at byte 3\"");
}

TEST(RunDirectory, AppearsWithTheFirstResultOnly) {
  const test_support::TempDir tmp;
  const fs::path root = tmp.path() / "out" / "runs";
  auto dir = std::make_shared<RunDirectory>(root, "camp");
  JsonlReporter jsonl(dir);
  CsvReporter csv(dir);
  jsonl.begin({"camp", "c.toml", 2, 1});
  csv.begin({"camp", "c.toml", 2, 1});
  EXPECT_FALSE(fs::exists(tmp.path() / "out")) << "begin created the output directory";
  EXPECT_FALSE(dir->created());
  const CaseResult r = three_cases()[0];
  jsonl.add(r);
  csv.add(r);
  jsonl.end();
  csv.end();
  ASSERT_TRUE(dir->created());
  EXPECT_EQ(dir->path().parent_path(), root);
  EXPECT_EQ(dir->path().filename().string().rfind("camp-", 0), 0u) << dir->path();
  std::ifstream in(dir->path() / "results.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(nlohmann::json::parse(line).at("case_index"), 0);
  std::ifstream csv_in(dir->path() / "results.csv");
  std::string header;
  ASSERT_TRUE(std::getline(csv_in, header));
  EXPECT_EQ(header, csv_header());
}

TEST(RunDirectory, ANonDirectoryOutputIsRefusedAtBegin) {
  const test_support::TempDir tmp;
  const fs::path file = tmp.write("plain", "x");
  auto dir = std::make_shared<RunDirectory>(file / "runs", "camp");
  JsonlReporter jsonl(dir);
  EXPECT_EQ(dir->problem(), "--output: cannot make the results directory under " +
                                (file / "runs").string() + ": " + file.string() +
                                " is not a writable directory");
  EXPECT_THROW(jsonl.begin({"camp", "c.toml", 1, 1}), std::runtime_error);
  EXPECT_EQ(RunDirectory(tmp.path() / "a" / "b", "camp").problem(), "");
}

TEST(Provenance, ShellQuoting) {
  EXPECT_EQ(shell_quote("build/bin/ckptbench"), "build/bin/ckptbench");
  EXPECT_EQ(shell_quote("--set=backend.threads=4"), "--set=backend.threads=4");
  EXPECT_EQ(shell_quote("strategy.mapping=[\"a\", \"b\"]"), "'strategy.mapping=[\"a\", \"b\"]'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$HOME"), "'$HOME'");
}

std::string campaign_with(const std::string& target, int iterations) {
  return "[campaign]\nname = \"h\"\ntarget = \"" + target +
         "\"\niterations = " + std::to_string(iterations) + "\n[model]\nname = \"llama3-8b\"\n";
}

TEST(Provenance, ConfigHashDoesNotDependOnTheTarget) {
  const Case a = parse_campaign(campaign_with("/mnt/a", 3), "a.toml", {}).cases.at(0);
  const Case b = parse_campaign(campaign_with("relative/b", 3), "b.toml", {}).cases.at(0);
  const Case c = parse_campaign(campaign_with("/mnt/a", 4), "c.toml", {}).cases.at(0);
  ASSERT_NE(a.config, b.config);
  EXPECT_EQ(config_hash(a), config_hash(b));
  EXPECT_NE(config_hash(a), config_hash(c));
  EXPECT_EQ(a.config["campaign"]["target"], "/mnt/a")
      << "the config itself still records the target";
}

TEST(Provenance, ConfigHashCoversOnlyTheUsedBackendsOptions) {
  const auto hash_of = [](const std::string& backend, const std::string& extra) {
    const std::string toml =
        campaign_with("/mnt/a", 3) + "[backend]\nname = \"" + backend + "\"\n" + extra;
    return config_hash(parse_campaign(toml, "h.toml", {}).cases.at(0));
  };
  const std::string other = "[backend.hdf5]\nalignment = 4096\n";
  EXPECT_EQ(hash_of("posix", ""), hash_of("posix", other))
      << "another backend's options do not change what a posix case measures";
  EXPECT_NE(hash_of("hdf5", ""), hash_of("hdf5", other));
  EXPECT_NE(hash_of("posix", ""), hash_of("hdf5", ""));
}

}  // namespace
}  // namespace ckpt::harness
