// `ckptbench project` on a real tiny run (Llama 3 8B's bf16 weights scaled 1024× down), its
// errors, `report` with the same projection options (text and the HTML page rendered by headless
// Chromium), and `measure.latency` end to end: the results' latency object only when it is on, and
// the report's latency table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "harness/results/schema_version.hpp"
#include "tests/cli/headless_browser.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// One rank (world of 1, 8 GPUs per node: one node) writing Llama 3 8B's weights at scale 1024,
// posix with fsync, one timed iteration; `rest` adds keys.
std::string tiny_campaign(const fs::path& target, const std::string& rest) {
  return campaign_toml("tiny-8b", target,
                       "create_target = true\niterations = 1\nwarmup = 0\n[model]\nname = "
                       "\"llama3-8b\"\nscale = 1024\n"
                       "[state]\nscope = \"weights\"\n[backend]\nname = \"posix\"\n" +
                           rest);
}

class ProjectCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path campaign = dir_.write("tiny.toml", tiny_campaign(dir_ / "target", ""));
    const Outcome o =
        ckptbench({"-q", "run", campaign.string(), "--output", (dir_ / "out").string()});
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    run_ = run_directory(dir_ / "out");
  }
  Scratch dir_;
  fs::path run_;
};

TEST_F(ProjectCli, RealRunProjectedWithTheStorageAsTheBound) {
  const auto results = read_results(dir_ / "out");
  ASSERT_EQ(results.size(), 1u);
  // 8,030,261,248 parameters × 2 bytes (bf16 weights) at scale 1.
  EXPECT_EQ(results[0].at("full_scale_bytes_per_checkpoint").get<std::uint64_t>(), 16060522496u);
  EXPECT_FALSE(results[0].contains("latency"));
  // Storage 0.01 GiB/s bounds both: C = R = 16060522496 / (0.01 × 2^30) = 1495.75 s = 24.9 min.
  // M = 4 h = 14,400 s: Young = √(2 · 1495.75 · 14400) = 6563.4 s = 109 min; C/2M = 0.0519359,
  // Daly = 6563.36 × (1 + 0.0759660 + 0.0057707) − 1495.75 = 5604.07 s = 93.4 min;
  // waste = 1495.75/5604.07 + (2802.03 + 1495.75)/14400 = 0.266904 + 0.298457 = 56.54%.
  const fs::path html = dir_ / "projection.html";
  const Outcome o = ckptbench({"project", run_.string(), "--mtbf-hours", "4", "--storage-gib-per-s",
                               "0.01", "--html", html.string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "14.96 GiB")) << o.out;
  EXPECT_TRUE(contains(o.out, "24.9 min*")) << o.out;
  EXPECT_TRUE(contains(o.out, "109 min")) << o.out;
  EXPECT_TRUE(contains(o.out, "93.4 min")) << o.out;
  EXPECT_TRUE(contains(o.out, "56.54%")) << o.out;
  EXPECT_TRUE(contains(o.out, "* = bound by the storage")) << o.out;
  const std::string page = read_text(html);
  EXPECT_TRUE(contains(page, "<svg")) << page.substr(0, 400);
  EXPECT_TRUE(contains(page, "τ Young = 109 min")) << page.substr(0, 400);
  EXPECT_TRUE(contains(page, "τ Daly = 93.4 min: waste 56.54%")) << page.substr(0, 400);
  EXPECT_FALSE(contains(page, "<script"));
}

TEST_F(ProjectCli, NonsensicalOptionsExitTwoWithTheFix) {
  Outcome o = ckptbench({"project", run_.string(), "--mtbf-hours", "0"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err,
      "ckptbench: error: --mtbf-hours must be a number of hours from 0.01 to 1000000 (got 0)"))
      << o.err;
  o = ckptbench({"project", run_.string(), "--mtbf-hours", "3", "--storage-gib-per-s", "-2"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "--storage-gib-per-s must be a number of GiB/s from 1e-06 to 1000000000 (got -2)"))
      << o.err;
  o = ckptbench({"project", run_.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "--mtbf-hours H, or --mtbf-preset llama3-16k")) << o.err;
  // A results line without the full-scale bytes (an older ckptbench): path, line, field, fix.
  auto line = read_results(dir_ / "out").at(0);
  line.erase("full_scale_bytes_per_checkpoint");
  const fs::path old = dir_.write("old/results.jsonl", line.dump() + "\n");
  o = ckptbench({"project", old.string(), "--mtbf-preset", "llama3-16k"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, old.string() + ":1: case 0 has no `full_scale_bytes_per_checkpoint`"))
      << o.err;
}

// tier_model_test's small job as numbers (steps of 10 s; near: 2 s stall, 30 s restore; far: 8 s
// stall, durable after 20 s, 300 s restore; M = 10 h; 3 failures in 4 spare the near tier).
std::vector<std::string> small_job_tiers() {
  return {"--mtbf-hours",       "10",
          "--near-tier",        "stall=2,restore=30",
          "--far-tier",         "stall=8,durable=20,restore=300",
          "--near-recoverable", "0.75",
          "--step-seconds",     "10",
          "--mc-trials",        "50"};
}

TEST_F(ProjectCli, TwoTiersGiveTheBestIntervalsAndRefuseNonsense) {
  // Numbers alone need no run.
  std::vector<std::string> args{"project"};
  for (const std::string& a : small_job_tiers()) args.push_back(a);
  Outcome o = ckptbench(args);
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_FALSE(contains(o.out, "full-scale:")) << "no case, no per-case table\n" << o.out;
  // The brute-force optimum (43, 3) at 97.91%; the far tier alone every 75 steps at 97.05%.
  EXPECT_TRUE(contains(o.out, "Two-level checkpoint intervals")) << o.out;
  EXPECT_TRUE(contains(o.out,
                       "best: k = 43, K = 3 (near tier every 7.17 min, far tier every 21.5 "
                       "min): goodput 97.91%, simulated "))
      << o.out;
  EXPECT_TRUE(contains(o.out, "75 (12.5 min)")) << o.out;
  EXPECT_TRUE(contains(o.out, "97.05%")) << o.out;
  EXPECT_TRUE(contains(o.out, "K* = √(p·(C3 − C1)/((1 − p)·C1)) = 3")) << o.out;
  // The far tier from the run itself.
  o = ckptbench({"project", run_.string(), "--mtbf-hours", "10", "--near-tier",
                 "stall=2,restore=30", "--far-tier", "run=" + run_.filename().string(),
                 "--near-recoverable", "0.9", "--step-seconds", "10", "--mc-trials", "10"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "full-scale:")) << o.out;
  EXPECT_TRUE(contains(o.out, "far   " + run_.filename().string() + ": -")) << o.out;
  o = ckptbench({"project", "--mtbf-hours", "10"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "project needs RUN")) << o.err;
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> refused{
      {{"--near-tier", "stall=nan,restore=30"},
       "ckptbench: error: --near-tier: stall=nan must be a number of seconds from 0 to 1e+09"},
      {{"--far-tier", "stall=8,restore=-1"},
       "ckptbench: error: --far-tier: restore=-1 must be a number of seconds from 0 to 1e+09"},
      {{"--far-tier", ""},
       "ckptbench: error: two-level intervals need both tiers, --far-tier is missing"}};
  for (const auto& [change, message] : refused) {
    std::vector<std::string> bad{"project", run_.string()};
    for (const std::string& a : small_job_tiers()) bad.push_back(a);
    const auto at = std::find(bad.begin(), bad.end(), change.first);
    *(at + 1) = change.second;
    o = ckptbench(bad);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, message)) << o.err;
  }
}

// The values of RealRunProjectedWithTheStorageAsTheBound, now in `report`'s text and in its HTML
// page as a real browser renders it.
TEST_F(ProjectCli, ReportWithProjectionOptionsAddsTheTableAndTheChart) {
  const fs::path html = dir_ / "report.html";
  const Outcome o = ckptbench({"report", run_.string(), "--mtbf-hours", "4", "--storage-gib-per-s",
                               "0.01", "--html", html.string(), "--near-tier", "stall=2,restore=30",
                               "--far-tier", "stall=8,durable=20,restore=300", "--near-recoverable",
                               "0.75", "--step-seconds", "10", "--mc-trials", "10"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "Projection to the full training job")) << o.out;
  EXPECT_TRUE(contains(o.out, "Two-level checkpoint intervals")) << o.out;
  for (const char* value : {"14.96 GiB", "24.9 min*", "109 min", "93.4 min", "56.54%"}) {
    EXPECT_TRUE(contains(o.out, value)) << value << " missing in\n" << o.out;
  }
  const Outcome plain = ckptbench({"report", run_.string(), "--markdown"});
  ASSERT_EQ(plain.exit_code, 0) << plain.describe();
  EXPECT_FALSE(contains(plain.out, "Projection")) << "no projection options, no projection";
  const Outcome md =
      ckptbench({"report", run_.string(), "--markdown", "--mtbf-preset", "llama3-16k"});
  ASSERT_EQ(md.exit_code, 0) << md.describe();
  EXPECT_TRUE(contains(md.out, "## Projection to the full training job")) << md.out;
  const Outcome bad = ckptbench({"report", run_.string(), "--nodes", "4"});
  EXPECT_EQ(bad.exit_code, 2) << bad.describe();
  EXPECT_TRUE(contains(bad.err, "--mtbf-hours H, or --mtbf-preset llama3-16k")) << bad.err;

  const std::string browser = chromium();
  if (browser.empty())
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium; ci/setup.sh lists it)";
  const Outcome dom = render_page(browser, dir_ / "profile", html, "--dump-dom");
  ASSERT_EQ(dom.exit_code, 0) << dom.describe();
  for (const std::string& expected :
       {std::string("Bandwidth per case"), std::string("Full-scale checkpoint cost"),
        std::string("<td class=\"n\">24.9 min*</td>"), std::string("<td class=\"n\">93.4 min</td>"),
        std::string("<td class=\"n\">56.54%</td>"), std::string("Waste against interval: -"),
        std::string("aria-label=\"waste against interval: -\""),
        std::string("τ Daly = 93.4 min: waste 56.54%"), std::string("τ Young = 109 min"),
        std::string("Two-level checkpoint intervals"),
        std::string("aria-label=\"waste against the near interval, one curve per K\""),
        std::string("far tier only"), std::string("K = 1")}) {
    EXPECT_TRUE(contains(dom.out, expected)) << "the rendered DOM lacks " << expected;
  }
  EXPECT_FALSE(contains(dom.out, "<script")) << "no JavaScript";
}

// A synthetic results line: 1 GiB a checkpoint written in 1 s and read in 0.5 s by a world of
// `world` ranks, 8 GPUs a node, 8 GiB at full scale.
nlohmann::json projected_line(std::int64_t world) {
  return {{"schema_version", harness::kResultsSchemaVersion},
          {"campaign", "p"},
          {"case", nlohmann::json::object()},
          {"status", "ok"},
          {"bytes_per_checkpoint", std::uint64_t{1} << 30},
          {"world_size", world},
          {"full_scale_bytes_per_checkpoint", std::uint64_t{8} << 30},
          {"config", {{"ranks", {{"gpus_per_node", 8}}}}},
          {"samples", {{"write_seconds", {1.0}}, {"read_seconds", {0.5}}}}};
}

TEST(ProjectBounds, WorldSizeBelowOneIsRefusedNamingFileAndLine) {
  Scratch dir;
  for (std::int64_t world : {0, -8}) {
    const fs::path file = dir.write("w/results.jsonl", projected_line(world).dump() + "\n");
    const Outcome o = ckptbench({"project", file.string(), "--mtbf-hours", "4"});
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, "ckptbench: error: " + file.string() +
                                    ":1: `world_size`: must be from 1 to 1,073,741,824, "
                                    "found " +
                                    std::to_string(world) +
                                    " — is this a ckptbench results.jsonl?"))
        << o.describe();
  }
}

TEST(ProjectBounds, ExtremeOptionsAreRefusedByName) {
  Scratch dir;
  const fs::path file = dir.write("w/results.jsonl", projected_line(8).dump() + "\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--nodes", "1000000000000", "--mtbf-hours", "4"},
       "--nodes must be from 1 to 1,000,000 (got 1000000000000)"},
      {{"--mtbf-hours", "1e-300"},
       "--mtbf-hours must be a number of hours from 0.01 to 1000000 (got 1e-300)"},
      {{"--mtbf-hours", "nan"},
       "--mtbf-hours must be a number of hours from 0.01 to 1000000 (got nan)"},
      {{"--mtbf-hours", "1e300"},
       "--mtbf-hours must be a number of hours from 0.01 to 1000000 (got 1e+300)"},
      {{"--mtbf-hours", "4", "--storage-gib-per-s", "inf"},
       "--storage-gib-per-s must be a number of GiB/s from 1e-06 to 1000000000 (got inf)"}};
  for (const auto& [options, message] : cases) {
    std::vector<std::string> args{"project", file.string()};
    args.insert(args.end(), options.begin(), options.end());
    const Outcome o = ckptbench(args);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, "ckptbench: error: " + message)) << o.describe();
  }
}

// The far ends of every range still print finite, short figures: no -nan, no negative GPU
// counts, no 300-digit cells.
TEST(ProjectBounds, TheWidestInputsPrintFiniteReadableFigures) {
  Scratch dir;
  nlohmann::json line = projected_line(8);
  line["full_scale_bytes_per_checkpoint"] = std::numeric_limits<std::uint64_t>::max();
  fs::path file = dir.write("w/results.jsonl", line.dump() + "\n");
  const Outcome refused = ckptbench({"project", file.string(), "--mtbf-hours", "4"});
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_TRUE(contains(refused.err, file.string() +
                                        ":1: `full_scale_bytes_per_checkpoint`: must be at most "
                                        "1152921504606846976 (1 EiB), found 18446744073709551615"))
      << refused.describe();
  line["full_scale_bytes_per_checkpoint"] = std::uint64_t{1} << 60;
  file = dir.write("w/results.jsonl", line.dump() + "\n");
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"--nodes", "1", "--mtbf-hours", "0.01", "--storage-gib-per-s",
                                 "1e-6"},
        {"--nodes", "1000000", "--mtbf-hours", "1000000"}}) {
    std::vector<std::string> args{"project", file.string()};
    args.insert(args.end(), options.begin(), options.end());
    const Outcome o = ckptbench(args);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    EXPECT_FALSE(contains(o.out, "nan")) << o.out;
    EXPECT_FALSE(contains(o.out, "inf")) << o.out;
    EXPECT_FALSE(std::regex_search(o.out, std::regex(R"((^|\s)-\d)"))) << o.out;
    std::size_t longest = 0, run = 0;
    for (char ch : o.out)
      longest = std::max(longest, run = std::isdigit(static_cast<unsigned char>(ch)) ? run + 1 : 0);
    EXPECT_LE(longest, 20u) << o.out;
  }
}

TEST(LatencyCli, RecordedOnlyWhenOnAndShownInTheReport) {
  Scratch dir;
  const fs::path campaign =
      dir.write("lat.toml", tiny_campaign(dir / "target", "[measure]\nlatency = [false, true]\n"));
  const Outcome o = ckptbench({"-q", "run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].contains("latency")) << results[0].dump();
  ASSERT_TRUE(results[1].contains("latency")) << results[1].dump();
  for (const char* direction : {"write", "read"}) {
    const auto& l = results[1].at("latency").at(direction);
    // file_per_rank, one rank: every extent is at least one request.
    EXPECT_GE(l.at("requests").get<std::uint64_t>(),
              results[1].at("extents_per_checkpoint").get<std::uint64_t>())
        << l;
    EXPECT_GT(l.at("p50_seconds").get<double>(), 0) << l;
    EXPECT_LE(l.at("p50_seconds").get<double>(), l.at("p99_seconds").get<double>()) << l;
    EXPECT_LE(l.at("p99_seconds").get<double>(), l.at("p999_seconds").get<double>()) << l;
    EXPECT_LE(l.at("p999_seconds").get<double>(), l.at("max_seconds").get<double>()) << l;
  }
  const Outcome report = ckptbench({"report", run_directory(dir / "out").string()});
  ASSERT_EQ(report.exit_code, 0) << report.describe();
  EXPECT_TRUE(contains(report.out, "Request latency")) << report.out;
  EXPECT_TRUE(contains(report.out, "measure.latency=true  write")) << report.out;
  EXPECT_FALSE(contains(report.out, "measure.latency=false  write")) << report.out;
}

TEST(LatencyCli, BackendsThatCannotTimeRequestsAreRefusedBeforeTheRun) {
  Scratch dir;
  const fs::path campaign =
      dir.write("lat.toml", tiny_campaign(dir / "target", "[measure]\nlatency = true\n") + "");
  const Outcome o = ckptbench(
      {"run", campaign.string(), "--set", "backend.name=null", "--output", (dir / "out").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "null: `measure.latency = true` is not supported")) << o.err;
  EXPECT_FALSE(fs::exists(dir / "out") && !fs::is_empty(dir / "out"));
}

}  // namespace
}  // namespace ckpt::integration
