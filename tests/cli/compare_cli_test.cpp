// What `compare`, `report` and `project` refuse: an alpha that is not a significance level, runs
// of another campaign or workload (unless --allow-different-workloads), wrongly typed or
// negative samples, and a results file nested 60,000 levels deep — each exit 2 with one message
// naming the option, or the file, line and key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/results/schema_version.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A results line of campaign `campaign`, 1 GiB per checkpoint, five write and read samples.
nlohmann::json record(const std::string& campaign, const std::string& hash, int threads) {
  return {
      {"schema_version", harness::kResultsSchemaVersion},
      {"campaign", campaign},
      {"case", {{"backend.threads", 1}}},
      {"status", "ok"},
      {"backend", "posix"},
      {"bytes_per_checkpoint", kGiB},
      {"world_size", 8},
      {"full_scale_bytes_per_checkpoint", 8 * kGiB},
      {"config_hash", hash},
      {"config",
       {{"backend", {{"name", "posix"}, {"threads", threads}}}, {"ranks", {{"gpus_per_node", 8}}}}},
      {"samples",
       {{"write_seconds", {1.0, 1.1, 0.9, 1.2, 1.0}},
        {"read_seconds", {0.5, 0.6, 0.4, 0.5, 0.5}}}}};
}

class HostileResults : public ::testing::Test {
 protected:
  fs::path run(const std::string& name, const nlohmann::json& line) {
    return dir_.write(name + "/results.jsonl", line.dump() + "\n").parent_path();
  }
  Scratch dir_;
  fs::path base_ = run("base", record("c", "h1", 1));
};

TEST_F(HostileResults, AlphaMustBeASignificanceLevel) {
  for (const char* alpha : {"nan", "inf", "-0.1", "1", "0"}) {
    const Outcome o = ckptbench({"compare", base_.string(), base_.string(), "--alpha", alpha});
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(
        o.err,
        std::string("ckptbench: error: --alpha: must be a significance level from 1e-09 to 0.5 "
                    "(e.g. 0.05), got ") +
            alpha))
        << o.describe();
  }
  EXPECT_EQ(ckptbench({"compare", base_.string(), base_.string(), "--alpha", "0.01"}).exit_code, 0);
}

TEST_F(HostileResults, AnotherCampaignIsRefusedUnlessAllowed) {
  const fs::path other = run("other", record("d", "h1", 1));
  Outcome o = ckptbench({"compare", base_.string(), other.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err,
      "ckptbench: error: BASE base holds campaign c and NEW other campaign d: different campaigns "
      "measure different workloads — compare two runs of one campaign and configuration, or "
      "pass --allow-different-workloads to compare them anyway"))
      << o.describe();
  o = ckptbench({"compare", base_.string(), other.string(), "--allow-different-workloads"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(
      contains(o.out, "compared anyway (--allow-different-workloads): BASE base holds campaign c"))
      << o.out;
}

TEST_F(HostileResults, AnotherWorkloadIsRefusedNamingTheKeysAnotherBackendSettingIsCompared) {
  nlohmann::json line = record("c", "h2", 1);
  line["config"]["model"] = {{"name", "llama3-70b"}};
  line["config"]["parallel"] = {{"tp", 8}};
  const fs::path other = run("other", line);
  Outcome o = ckptbench({"compare", base_.string(), other.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err,
      "ckptbench: error: case backend.threads=1 checkpoints another workload in NEW than in BASE "
      "(model.name = (none) in BASE, \"llama3-70b\" in NEW; parallel.tp = (none) in BASE, 8 in "
      "NEW) — compare two runs of one campaign and configuration, or pass "
      "--allow-different-workloads to compare them anyway"))
      << o.describe();
  o = ckptbench({"compare", base_.string(), other.string(), "--allow-different-workloads"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(
      contains(o.out, "compared anyway (--allow-different-workloads): case backend.threads=1"))
      << o.out;
  line = record("c", "h1", 1);
  line["bytes_per_checkpoint"] = 2 * kGiB;
  o = ckptbench({"compare", base_.string(), run("bigger", line).string()});
  EXPECT_EQ(o.exit_code, 0) << "the same config_hash: " << o.describe();
  line["config_hash"] = "h3";
  o = ckptbench({"compare", base_.string(), run("bigger", line).string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "(bytes_per_checkpoint = 1073741824 in BASE, 2147483648 in NEW)"))
      << o.describe();
  // How the same workload is written (a --set of a backend key) is what compare is for.
  o = ckptbench({"compare", base_.string(), run("threads", record("c", "h4", 8)).string()});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "backend.threads=1 *")) << o.out;
  EXPECT_FALSE(contains(o.out, "compared anyway")) << o.out;
}

TEST_F(HostileResults, NegativeOrMistypedSamplesNameFileLineAndKey) {
  nlohmann::json line = record("c", "h1", 1);
  line["samples"]["write_seconds"][2] = -0.5;
  const fs::path negative = run("negative", line);
  const std::string fix = " — is this a ckptbench results.jsonl (results/SCHEMA.md)?";
  for (const char* command : {"compare", "report", "project"}) {
    std::vector<std::string> args{command, base_.string(), negative.string()};
    if (std::string(command) == "project") args = {command, negative.string(), "--mtbf-hours", "4"};
    const Outcome o = ckptbench(args);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(
        o.err, "ckptbench: error: " + (negative / "results.jsonl").string() +
                   ":1: `samples.write_seconds[2]`: must be a number of at least 0, found -0.5" +
                   fix))
        << o.describe();
  }
  line = record("c", "h1", 1);
  line["bytes_per_checkpoint"] = "1 GiB";
  const fs::path typed = run("typed", line);
  const Outcome o = ckptbench({"report", typed.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, (typed / "results.jsonl").string() +
                 ":1: `bytes_per_checkpoint`: must be a whole number, found a string (\"1 GiB\")" +
                 fix))
      << o.describe();
}

TEST_F(HostileResults, SixtyThousandLevelsExitTwoInReportCompareAndProject) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  std::string text = record("c", "h1", 1).dump();
  text.replace(text.find("\"ok\""), 4, deep);
  const fs::path file = dir_.write("deep/results.jsonl", "\n" + text + "\n");
  const std::string expected = "ckptbench: error: " + file.string() +
                               ":2: arrays and objects nested more than 32 deep (at byte ";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"report", file.string()},
                                               {"compare", base_.string(), file.string()},
                                               {"compare", file.string(), base_.string()},
                                               {"project", file.string(), "--mtbf-hours", "4"}}) {
    const Outcome o = ckptbench(args);
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, expected)) << o.describe();
  }
}

}  // namespace
}  // namespace ckpt::integration
