// Published MLPerf Storage rows: the importer on the results repository's summary.json files,
// the committed table, the side-by-side print, and compare's matching on workload_hash.
#include "harness/report/mlperf_rows.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "harness/report/compare.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = CKPT_SOURCE_DIR;
const fs::path kFixtures = kSource / "tests/data/mlperf-v3.0";
const fs::path kTable = kSource / "results/published/mlperf-storage-v3.0-checkpointing.json";

TEST(MlperfRows, AWriteAndAReadInvocationMakeOneRow) {
  const fs::path run = kFixtures / "nvidia-aistore-12n-1client-8b";
  const MlperfRow r = row_from_summaries({run / "20260718_012411", run / "20260718_013114"});
  EXPECT_EQ(r.hosts, 1);
  EXPECT_EQ(r.accelerators, 8);
  EXPECT_EQ(r.checkpoint_gib, 104.70452117919922);
  EXPECT_EQ(r.write_gib_per_s.value_or(-1), 3.196488777385128);
  EXPECT_EQ(r.write_seconds.value_or(-1), 33.03964810000001);
  EXPECT_EQ(r.read_gib_per_s.value_or(-1), 8.334717693512255);
  EXPECT_EQ(r.read_seconds.value_or(-1), 12.9004964);
  EXPECT_EQ(r.write_end, "2026-07-18T01:31:12.220148");
  EXPECT_EQ(r.read_start, "2026-07-18T01:31:21.222451");
  ASSERT_TRUE(invocation_gap_seconds(r).has_value());
  EXPECT_NEAR(*invocation_gap_seconds(r), 9.002303, 1e-6);
  EXPECT_EQ(r.sources.size(), 2u);
}

TEST(MlperfRows, ACombinedInvocationHasNoGap) {
  const MlperfRow r = row_from_summaries({kFixtures / "everpure-fbexa-30dn-1t/20260715_131314"});
  EXPECT_EQ(r.hosts, 32);
  EXPECT_EQ(r.accelerators, 1024);
  EXPECT_EQ(r.write_gib_per_s.value_or(-1), 887.7354915026814);
  EXPECT_EQ(r.read_gib_per_s.value_or(-1), 586.9119786839829);
  EXPECT_FALSE(invocation_gap_seconds(r).has_value());
}

TEST(MlperfRows, SummariesOfDifferentRunsAreRefused) {
  const fs::path write = kFixtures / "nvidia-aistore-12n-1client-8b/20260718_012411/summary.json";
  const fs::path other = kFixtures / "nvidia-aistore-12n-16client-1t/20260718_030234/summary.json";
  try {
    row_from_summaries({write, other});
    FAIL() << "accepted summaries of two runs";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), other.string() + ": `num_hosts`: 16 here, 1 in " +
                                         write.string() + ": the files are of different runs");
  }
}

TEST(MlperfRows, TheCommittedTableIsItsFixturesImported) {
  const MlperfTable table = load_mlperf_table(kTable);
  ASSERT_EQ(table.rows.size(), 4u);
  for (const MlperfRow& row : table.rows) {
    std::vector<fs::path> sources;
    for (const std::string& s : row.sources) sources.push_back(kSource / s);
    const MlperfRow again = row_from_summaries(sources);
    EXPECT_EQ(again.hosts, row.hosts) << row.id;
    EXPECT_EQ(again.accelerators, row.accelerators) << row.id;
    EXPECT_EQ(again.checkpoint_gib, row.checkpoint_gib) << row.id;
    EXPECT_EQ(again.write_gib_per_s.value_or(-1), row.write_gib_per_s.value_or(-1)) << row.id;
    EXPECT_EQ(again.write_seconds.value_or(-1), row.write_seconds.value_or(-1)) << row.id;
    EXPECT_EQ(again.read_gib_per_s.value_or(-1), row.read_gib_per_s.value_or(-1)) << row.id;
    EXPECT_EQ(again.read_seconds.value_or(-1), row.read_seconds.value_or(-1)) << row.id;
    EXPECT_EQ(again.write_end, row.write_end) << row.id;
    EXPECT_EQ(again.read_start, row.read_start) << row.id;
  }
}

TEST(MlperfRows, SideBySideNormalisesAndSaysWhatIsNotComparable) {
  MlperfRow local;
  local.system = "w + r";
  local.storage = "posix on ext4";
  local.division = "non-compliant";
  local.model = "llama3-8b";
  local.hosts = 1;
  local.accelerators = 8;
  local.checkpoint_gib = 0.5;
  local.write_gib_per_s = 2.0;
  local.read_gib_per_s = 4.0;
  local.write_end = "2026-07-18T01:00:00.000000";
  local.read_start = "2026-07-18T01:00:31.500000";
  MlperfRow published = local;
  published.id = "p";
  published.organization = "Org";
  published.system = "sys";
  published.division = "closed";
  published.hosts = 2;
  published.checkpoint_gib = 104.70452117919922;
  published.write_gib_per_s = 8.0;
  std::ostringstream out;
  print_side_by_side(local, {published}, "the fixtures", true, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("| this run: w + r | posix on ext4 | non-compliant | 1 | 8 | 0.500 | 2.00 | "
                      "2.00 | 0.250 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| p: Org sys | posix on ext4 | closed | 2 | 8 | 105 | 8.00 | 4.00 | 1.00 |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Not the same work: p wrote 105 GiB per checkpoint, this run 0.500 GiB"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the read started 31.5 s after the write ended (Rules.md 4.7.1: within 30 "
                      "s): NOT met."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Published rows: the fixtures"), std::string::npos) << text;
}

// Two runs of one workload on other systems: other campaigns, another backend.
TEST(CompareByWorkload, MatchesCasesOfOneWorkloadAcrossCampaignsAndTuning) {
  const auto run = [](const std::string& campaign, const std::string& config,
                      const std::string& workload) {
    CaseRecord c;
    c.campaign = campaign;
    c.config_hash = config;
    c.workload_hash = workload;
    c.bytes = 1 << 30;
    c.write.seconds = {1.0, 1.0, 1.0, 1.0};
    RunRecord r;
    r.name = campaign;
    r.cases = {c};
    return r;
  };
  const RunRecord base = run("site-a", "c1", "w1"), next = run("site-b", "c2", "w1");
  const Comparison by_config = compare_runs(base, next, 0.05);
  EXPECT_NE(workload_difference(by_config, base, next), "");  // other campaigns
  const Comparison by_workload = compare_runs(base, next, 0.05, CaseMatch::workload);
  ASSERT_EQ(by_workload.cases.size(), 1u);
  EXPECT_TRUE(by_workload.cases[0].same_workload);
  EXPECT_FALSE(by_workload.cases[0].same_config);
  EXPECT_EQ(workload_difference(by_workload, base, next), "");
  const RunRecord other = run("site-b", "c2", "w2");
  EXPECT_EQ(workload_difference(compare_runs(base, other, 0.05, CaseMatch::workload), base, other),
            "case - has workload_hash w1 in BASE and w2 in NEW: another workload");
}

}  // namespace
}  // namespace ckpt::harness
