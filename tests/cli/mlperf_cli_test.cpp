// The MLPerf two-invocation workflow through the binary: the 8B preset written by one run and
// read by another, each leaving DLIO's summary.json; `mlperf compare` puts the pair beside the
// published 8B rows and checks the gap; `mlperf import` reads ckptbench's summaries back.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

const std::string kSource = CKPT_SOURCE_DIR;

// Sanitizer builds skip the extra runs (gcc says so with __SANITIZE_ADDRESS__, clang with
// __has_feature).
class MlperfWorkflow : public ::testing::Test {
 protected:
  // One invocation of the 8B preset (1/4096 of the workload, 2 checkpoints) in `phase`.
  fs::path invocation(const std::string& phase) {
    const fs::path output = dir_ / phase;
    const Outcome o = ckptbench(
        {"run", kSource + "/configs/mlperf/llama3-8b.toml", "--phase", phase, "--output",
         output.string(), "--set", "campaign.target=" + (dir_ / "target").string(), "--set",
         "model.scale=4096", "--set", "campaign.iterations=2", "--set", "cache.policy=fadvise"});
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    return run_directory(output);
  }
  static nlohmann::json json_of(const fs::path& file) {
    return nlohmann::json::parse(read_text(file));
  }

  Scratch dir_;
};

TEST_F(MlperfWorkflow, WriteThenReadLeaveDlioSummariesThatCompareAndImport) {
  const fs::path write = invocation("checkpoint");
  const fs::path read = invocation("restore");
  const nlohmann::json ws = json_of(write / "summary.json");
  const nlohmann::json rs = json_of(read / "summary.json");
  EXPECT_TRUE(ws.at("metric").contains("save_checkpoint_io_mean_GB_per_second"));
  EXPECT_FALSE(ws.at("metric").contains("load_checkpoint_io_mean_GB_per_second"));
  EXPECT_TRUE(rs.at("metric").contains("load_checkpoint_io_mean_GB_per_second"));
  EXPECT_FALSE(rs.at("metric").contains("save_checkpoint_io_mean_GB_per_second"));
  const nlohmann::json record = nlohmann::json::parse(read_text(write / "results.jsonl"));
  EXPECT_EQ(ws.at("metric").at("checkpoint_size_GB").get<double>(),
            record.at("bytes_per_checkpoint").get<double>() / (1 << 30));
  EXPECT_EQ(ws.at("metric").at("save_checkpoint_io_mean_GB_per_second"),
            record.at("dlio").at("write").at("mean_gib_per_s"));
  EXPECT_EQ(ws.at("num_accelerators"), 8);
  // The write run's verdict is taken in its own phase: no "campaign.phase = both" reason.
  EXPECT_EQ(record.at("mlperf").at("reasons").size(), 2u) << record.at("mlperf").dump();
  EXPECT_EQ(record.at("mlperf").at("read_gap_seconds"), nullptr);
  // The read run found the write run's end and started within 30 s of it: no reason more.
  const nlohmann::json read_record = nlohmann::json::parse(read_text(read / "results.jsonl"));
  const nlohmann::json& verdict = read_record.at("mlperf");
  EXPECT_EQ(verdict.at("write_ended_utc"), ws.at("end")) << verdict.dump();
  EXPECT_GE(verdict.at("read_gap_seconds").get<double>(), 0.0) << verdict.dump();
  EXPECT_LE(verdict.at("read_gap_seconds").get<double>(), 30.0) << verdict.dump();
  EXPECT_EQ(verdict.at("reasons").size(), 2u) << verdict.dump();

  const Outcome side =
      ckptbench({"mlperf", "compare", write.string(), read.string(), "--table",
                 kSource + "/results/published/mlperf-storage-v3.0-checkpointing.json"});
  EXPECT_EQ(side.exit_code, 0) << side.describe();
  for (const char* part :
       {"this run: ", "nvidia-aistore-12n-1client-8b: NVIDIA",
        "nvidia-aistore-3n-1client-8b: NVIDIA",
        "Not the same work: nvidia-aistore-12n-1client-8b wrote 105 GiB per checkpoint",
        "labelled non-compliant", "Two invocations: the read started"}) {
    EXPECT_TRUE(contains(side.out, part)) << part << "\n" << side.describe();
  }
  EXPECT_FALSE(contains(side.out, "llama3-1t")) << side.describe();

  const Outcome imported = ckptbench({"mlperf", "import", write.string(), read.string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.describe();
  const nlohmann::json row = nlohmann::json::parse(imported.out);
  EXPECT_EQ(row.at("model"), "llama3-8b");
  EXPECT_EQ(row.at("division"), "non-compliant");
  EXPECT_EQ(row.at("accelerators"), 8);
  EXPECT_EQ(row.at("write_gib_per_s"), ws.at("metric").at("save_checkpoint_io_mean_GB_per_second"));
  EXPECT_EQ(row.at("read_gib_per_s"), rs.at("metric").at("load_checkpoint_io_mean_GB_per_second"));
  EXPECT_EQ(row.at("write_end"), ws.at("end"));
  EXPECT_EQ(row.at("read_start"), rs.at("start"));
}

TEST_F(MlperfWorkflow, AReadStartedMoreThan30SecondsAfterTheWriteIsNonCompliant) {
  if (kSanitizedBuild) GTEST_SKIP() << "the gap's rule is unit-tested; this adds two runs";
  invocation("checkpoint");
  // The write ended an hour earlier, as its record in the case directory now says.
  fs::path marker;
  for (const auto& entry : fs::recursive_directory_iterator(dir_ / "target"))
    if (entry.path().filename() == "mlperf-write-end.json") marker = entry.path();
  ASSERT_FALSE(marker.empty());
  nlohmann::json end = json_of(marker);
  end["end_unix_seconds"] = end.at("end_unix_seconds").get<double>() - 3600;
  end["end_utc"] = "2026-01-01T00:00:00.000000";
  std::ofstream(marker) << end.dump();
  const fs::path read = invocation("restore");
  const nlohmann::json verdict =
      nlohmann::json::parse(read_text(read / "results.jsonl")).at("mlperf");
  EXPECT_EQ(verdict.at("label"), "non-compliant");
  EXPECT_GE(verdict.at("read_gap_seconds").get<double>(), 3600.0);
  const std::string reason = verdict.at("reasons").back().get<std::string>();
  EXPECT_TRUE(contains(reason,
                       "s after the write invocation ended (2026-01-01T00:00:00.000000 "
                       "UTC); the two-invocation workflow allows 30 s -- rule 4.7.1"))
      << reason;
}

TEST(MlperfImport, RefusesWhatIsNoDlioSummaryNamingTheFileAndKey) {
  Scratch dir;
  const fs::path bogus = dir.write("summary.json", R"({"start": "x", "metric": {}})");
  const Outcome o = ckptbench({"mlperf", "import", "--model", "llama3-8b", bogus.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, bogus.string() + ": `num_hosts`")) << o.describe();
  const Outcome unnamed =
      ckptbench({"mlperf", "import",
                 kSource + "/tests/data/mlperf-v3.0/everpure-fbexa-30dn-1t/20260715_131314"});
  EXPECT_EQ(unnamed.exit_code, 2) << unnamed.describe();
  EXPECT_TRUE(contains(unnamed.err, "give --model")) << unnamed.describe();
}

}  // namespace
}  // namespace ckpt::integration
