// `ckptbench run` as a user tries it: --dry-run's checks ("would fail: …", exit 2) and its memory
// figure against what the run allocates, no results directory for a refused run, progress lines
// with ETAs and -q / -v, the restore refusal naming the keys that differ, --set lists.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "harness/cli/run_checks.hpp"
#include "harness/cli/run_progress.hpp"
#include "harness/common/text_format.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A campaign of the tiny model (about 1 MiB per checkpoint): two modeled ranks, one iteration.
std::string tiny_campaign(const std::string& name, const fs::path& target, const fs::path& model,
                          const std::string& more = "") {
  return campaign_toml(name, target,
                       "create_target = true\niterations = 1\nwarmup = 0\n" + more +
                           "[model]\nname = \"" + model.string() +
                           "\"\n[parallel]\ndp = 2\nzero = 1\n[cache]\npolicy = \"none\"\n");
}

// The words of the dry-run table row of case `index` ("0 2 1.05 MiB 2 18 1.05 MiB -").
std::vector<std::string> dry_run_row(const std::string& out, int index) {
  std::stringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words),
                               std::istream_iterator<std::string>()};
    if (w.size() >= 9 && w[0] == std::to_string(index)) return w;
  }
  return {};
}

class DryRun : public ::testing::Test {
 protected:
  Outcome dry_run(const std::string& extra_toml, const std::vector<std::string>& extra_args = {}) {
    const fs::path campaign =
        dir_.write("c.toml", tiny_campaign("dry", target_, model_, extra_toml));
    std::vector<std::string> args{"run", campaign.string(), "--dry-run", "--output",
                                  output_.string()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    return ckptbench(args);
  }
  // Neither a results directory nor a target: nothing was written.
  void expect_nothing_written() const {
    EXPECT_FALSE(fs::exists(output_)) << "a results directory was made";
    EXPECT_FALSE(fs::exists(target_)) << "the target was made";
  }

  Scratch dir_;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  fs::path target_ = dir_ / "target";
  fs::path output_ = dir_ / "results";
};

TEST_F(DryRun, EveryCheckPassingExitsZeroAndWritesNothing) {
  const Outcome o = dry_run("");
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "every check a run makes before its I/O passed")) << o.describe();
  EXPECT_TRUE(o.err.empty()) << o.describe();
  expect_nothing_written();
}

TEST_F(DryRun, UnavailableBackendWouldFail) {
  const Outcome list = ckptbench({"backends", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  std::string unavailable;
  for (const auto& b : nlohmann::json::parse(list.out)) {
    if (!b.at("available").get<bool>()) unavailable = b.at("name").get<std::string>();
  }
  if (unavailable.empty())
    GTEST_SKIP() << "every backend is available in this build and on this machine";
  const Outcome o = dry_run("", {"--set", "backend.name=" + unavailable});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "would fail: case 0: backend.name = \"" + unavailable + "\" is unavailable here: "))
      << o.describe();
  EXPECT_TRUE(contains(o.out, "case   ranks")) << "the table is still printed\n" << o.describe();
  expect_nothing_written();
}

// An object store writes each file whole from one process: a mapping that shares files between
// processes is refused up front, saying why and what to choose. No request is made (no server).
TEST_F(DryRun, AnObjectStoreRefusesSharedFilesSayingWhatToUse) {
  const Outcome list = ckptbench({"backends", "--json"});
  ASSERT_EQ(list.exit_code, 0) << list.describe();
  bool s3 = false;
  for (const auto& b : nlohmann::json::parse(list.out))
    s3 = s3 || (b.at("name") == "s3" && b.at("available").get<bool>());
  if (!s3) GTEST_SKIP() << "the s3 backend is not built (CKPT_BACKEND_S3)";
  ::setenv("AWS_ACCESS_KEY_ID", "id", 0);
  ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 0);
  const Outcome o =
      dry_run("", {"--set", "backend.name=s3", "--set", "backend.s3.endpoint=http://127.0.0.1:1",
                   "--set", "backend.s3.bucket=ckpt", "--set", "strategy.mapping=shared_file"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err,
                       "would fail: case 0: backend.name = \"s3\" cannot write strategy.mapping = "
                       "\"shared_file\", whose files several processes write (capabilities: "
                       "shared_file = false): an object is written whole by one process"))
      << o.describe();
  EXPECT_TRUE(contains(o.err, "use strategy.mapping = \"file_per_rank\"")) << o.describe();
  // The endpoint (nothing listens on port 1) is not contacted, and the dry run says so.
  EXPECT_TRUE(contains(o.out, "not checked by a dry run: whether the s3 endpoint answers"))
      << o.describe();
  expect_nothing_written();
}

TEST_F(DryRun, UnknownBackendOptionKeyIsRefusedWithTheClosestKey) {
  const Outcome o = dry_run("", {"--set", "backend.mpiio.colective=true"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(
      contains(o.err,
               "ckptbench: error: --set: `backend.mpiio.colective`: unknown key — did you mean "
               "`backend.mpiio.collective`?"))
      << o.describe();
  expect_nothing_written();
}

TEST_F(DryRun, MemoryBudgetWouldFailNamingTheNeed) {
  const Outcome o = dry_run("memory_budget = \"64 KiB\"\n");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  const std::vector<std::string> row = dry_run_row(o.out, 0);
  ASSERT_FALSE(row.empty()) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "would fail: case 0: campaign.memory_budget: the case needs " + row[6] + " " + row[7] +
                 " of buffers per process (2 modeled ranks over 1 processes) but the budget is "
                 "64.00 KiB"))
      << o.describe();
  // Over two processes each needs half (the two ranks' buffers are the same size).
  const Outcome two = dry_run("memory_budget = \"64 KiB\"\n", {"--processes", "2"});
  EXPECT_TRUE(contains(two.out, "1 cases, 2 process(es)")) << two.describe();
  EXPECT_TRUE(contains(two.err, "(2 modeled ranks over 2 processes)")) << two.describe();
  expect_nothing_written();
}

TEST_F(DryRun, MissingTargetWouldFail) {
  const Outcome o = dry_run("", {"--set", "campaign.create_target=false"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(
      contains(o.err, "would fail: case 0: campaign.target: directory " + target_.string() +
                          " does not exist — create it, or set campaign.create_target = true"))
      << o.describe();
  expect_nothing_written();
}

TEST_F(DryRun, TargetThatIsAFileWouldFail) {
  dir_.write("target", "not a directory");
  const Outcome o = dry_run("");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "would fail: case 0: campaign.target: " + target_.string() + " is not a directory"))
      << o.describe();
  EXPECT_FALSE(fs::exists(output_));
}

TEST_F(DryRun, OlderCheckpointWithoutOverwriteWouldFail) {
  const fs::path campaign = dir_.write("c.toml", tiny_campaign("dry", target_, model_));
  const Outcome write = ckptbench(
      {"run", campaign.string(), "--phase", "checkpoint", "--output", (dir_ / "w").string()});
  ASSERT_EQ(write.exit_code, 0) << write.describe();
  const Outcome o = dry_run("");
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "would fail: case 0: campaign.target: " + (target_ / "dry" / "case-0000").string() +
                 " holds an older checkpoint of this case"))
      << o.describe();
  EXPECT_EQ(dry_run("", {"--phase", "restore"}).exit_code, 0) << "the restore of it would start";
}

TEST_F(DryRun, RestoreWithoutACheckpointWouldFail) {
  const Outcome o = dry_run("", {"--phase", "restore"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "would fail: case 0: no complete checkpoint to restore: " +
                                  (target_ / "dry" / "case-0000" / "latest").string() +
                                  " is missing"))
      << o.describe();
}

TEST_F(DryRun, SeveralProblemsAreAllListedAndSharedOnesOnce) {
  const Outcome o =
      dry_run("memory_budget = \"64 KiB\"\n", {"--set", "campaign.create_target=false", "--set",
                                               "strategy.mapping=[file_per_rank,shared_file]"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "would fail: cases 0, 1: campaign.target: directory "))
      << o.describe();
  EXPECT_TRUE(contains(o.err, "would fail: cases 0, 1: campaign.memory_budget: ")) << o.describe();
}

// The memory a dry run reports is what the run allocates: the same bytes as the results'
// memory_bytes_per_process, for a write + read_shift run (two buffers), a checkpoint-only run
// and a restore (buffers planned from the manifest).
TEST(DryRunMemory, EqualsWhatTheRunAllocates) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write(
      "m.toml", tiny_campaign("mem", dir / "target", model, "keep = true\noverwrite = true\n"));
  harness::MemorySpaces spaces;
  struct Variant {
    std::string phase;
    std::vector<std::string> set;
  };
  for (const Variant& v : std::vector<Variant>{{"both", {"cache.policy=read_shift"}},
                                               {"checkpoint", {"cache.policy=none"}},
                                               {"restore", {"cache.policy=read_shift"}}}) {
    SCOPED_TRACE(v.phase + " with " + v.set.back());
    const harness::Campaign loaded = harness::load_campaign(campaign, v.set);
    ASSERT_EQ(loaded.cases.size(), 1u);
    const harness::PhaseSelection selection = v.phase == "both" ? harness::PhaseSelection::both
                                              : v.phase == "checkpoint"
                                                  ? harness::PhaseSelection::checkpoint
                                                  : harness::PhaseSelection::restore;
    const std::uint64_t planned =
        harness::check_case(loaded.cases[0], selection, 1, spaces).memory_per_process;
    ASSERT_GT(planned, 0u);

    std::vector<std::string> sets;
    for (const std::string& s : v.set) sets.insert(sets.end(), {"--set", s});
    std::vector<std::string> dry_args{"run", campaign.string(), "--dry-run", "--phase", v.phase};
    dry_args.insert(dry_args.end(), sets.begin(), sets.end());
    const Outcome dry = ckptbench(dry_args);
    ASSERT_EQ(dry.exit_code, 0) << dry.describe();
    const std::vector<std::string> row = dry_run_row(dry.out, 0);
    ASSERT_FALSE(row.empty()) << dry.describe();
    EXPECT_EQ(row[6] + " " + row[7], harness::format_bytes(static_cast<std::int64_t>(planned)))
        << dry.describe();

    const fs::path output = dir / ("results-" + v.phase + std::to_string(v.set.size()));
    std::vector<std::string> run_args{"run",   campaign.string(), "--phase",
                                      v.phase, "--output",        output.string()};
    run_args.insert(run_args.end(), sets.begin(), sets.end());
    const Outcome run = ckptbench(run_args);
    ASSERT_EQ(run.exit_code, 0) << run.describe();
    const auto results = read_results(output);
    ASSERT_EQ(results.size(), 1u) << run.describe();
    EXPECT_EQ(results[0].at("memory_bytes_per_process").get<std::uint64_t>(), planned)
        << results[0].dump();
  }
}

TEST(RefusedRun, LeavesNoResultsDirectory) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign =
      dir.write("r.toml", tiny_campaign("refused", dir / "absent" / "target", model));
  const fs::path output = dir / "results";
  const Outcome o = ckptbench({"run", campaign.string(), "--set", "campaign.create_target=false",
                               "--output", output.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "ckptbench: error: case 0: campaign.target: directory "))
      << o.describe();
  EXPECT_FALSE(fs::exists(output)) << "a refused run made " << run_directory(output);
  EXPECT_TRUE(o.out.empty()) << o.describe();
}

TEST(RefusedRun, UnwritableOutputIsRefusedBeforeAnyCase) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write("r.toml", tiny_campaign("out", dir / "target", model));
  const fs::path file = dir.write("file", "x");
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (file / "results").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "--output: cannot make the results directory under " +
                                  (file / "results").string() + ": " + file.string() +
                                  " is not a writable directory"))
      << o.describe();
  EXPECT_FALSE(fs::exists(dir / "target")) << "the first case started";
}

// Two cases of two iterations: "case N (M of 2)" everywhere, an ETA for the case and the
// campaign on every line but the last, -q none of it, -v each iteration's times.
TEST(Progress, LinesNumberCasesFromZeroWithEtas) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write(
      "p.toml", tiny_campaign("progress", dir / "target", model,
                              "[strategy]\nmapping = [\"file_per_rank\", \"shared_file\"]\n"));
  const std::vector<std::string> base{"run",   campaign.string(),
                                      "--set", "campaign.iterations=2",
                                      "--set", "campaign.overwrite=true"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return ckptbench(args);
  };
  const Outcome o = with({"--output", (dir / "r0").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.err, "case 0 (1 of 2): strategy.mapping=file_per_rank\n")) << o.err;
  EXPECT_TRUE(contains(o.err, "case 0 (1 of 2) iteration 1/2: write ")) << o.err;
  EXPECT_TRUE(contains(o.err, " — case ETA ")) << o.err;
  EXPECT_TRUE(contains(o.err, ", campaign ETA ")) << o.err;
  EXPECT_TRUE(contains(o.err, "case 1 (2 of 2): strategy.mapping=shared_file — campaign ETA "))
      << o.err;
  const std::size_t last = o.err.find("case 1 (2 of 2) iteration 2/2: write ");
  ASSERT_NE(last, std::string::npos) << o.err;
  const std::string last_line = o.err.substr(last, o.err.find('\n', last) - last);
  EXPECT_FALSE(contains(last_line, "ETA")) << last_line;
  EXPECT_TRUE(contains(o.out, "results: ")) << o.describe();

  const Outcome quiet = with({"-q", "--output", (dir / "r1").string()});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.describe();
  EXPECT_TRUE(quiet.err.empty()) << quiet.describe();
  EXPECT_TRUE(contains(quiet.out, "strategy.mapping=shared_file")) << "the table is printed\n"
                                                                   << quiet.describe();

  const Outcome verbose = with({"--verbose", "--output", (dir / "r2").string()});
  ASSERT_EQ(verbose.exit_code, 0) << verbose.describe();
  EXPECT_TRUE(contains(verbose.err, "case 0 (1 of 2) iteration 1/2: write ")) << verbose.err;
  EXPECT_TRUE(contains(verbose.err, "\n  write ")) << verbose.err;
  EXPECT_TRUE(contains(verbose.err, " s, verify ")) << verbose.err;
  EXPECT_TRUE(contains(verbose.err, "; before the read: ")) << verbose.err;
}

TEST(FormatDuration, SecondsMinutesHours) {
  EXPECT_EQ(harness::format_duration(0.42), "0.4 s");
  EXPECT_EQ(harness::format_duration(42.4), "42 s");
  EXPECT_EQ(harness::format_duration(100), "1 min 40 s");
  EXPECT_EQ(harness::format_duration(7500), "2 h 5 min");
}

// A restore with other values of what decides the bytes names each key and both values.
TEST(RestoreRefusal, NamesTheKeysThatDifferAndBothValues) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write("r.toml", tiny_campaign("restore", dir / "target", model));
  const Outcome write =
      ckptbench({"run", campaign.string(), "--phase", "checkpoint", "--set", "parallel.tp=2",
                 "--set", "model.scale=2", "--output", (dir / "w").string()});
  ASSERT_EQ(write.exit_code, 0) << write.describe();
  const fs::path kept = latest_checkpoint(dir / "target" / "restore" / "case-0000");
  ASSERT_FALSE(kept.empty());
  const std::string expected =
      "case 0: checkpoint at " + kept.string() +
      " was written with model.scale = 2, this campaign has model.scale = 1 (and "
      "parallel.tp: 2 vs 1); restore with the keys it was written with";

  const fs::path output = dir / "r";
  const Outcome o =
      ckptbench({"run", campaign.string(), "--phase", "restore", "--output", output.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "ckptbench: error: " + expected)) << o.describe();
  EXPECT_FALSE(fs::exists(output));
  const Outcome dry = ckptbench({"run", campaign.string(), "--phase", "restore", "--dry-run"});
  EXPECT_EQ(dry.exit_code, 2) << dry.describe();
  EXPECT_TRUE(contains(dry.err, "would fail: " + expected)) << dry.describe();
  const Outcome same =
      ckptbench({"run", campaign.string(), "--phase", "restore", "--set", "parallel.tp=2", "--set",
                 "model.scale=2", "--set", "backend.name=uring", "--output", output.string()});
  EXPECT_EQ(same.exit_code, 0) << "another raw-byte backend reads it\n" << same.describe();
}

// --set key=[a,b] without inner quotes: bare words are strings, numbers stay numbers.
TEST(SetLists, BareWordsAndNumbers) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write("s.toml", tiny_campaign("set", dir / "target", model));
  const Outcome o = ckptbench({"run", campaign.string(), "--dry-run", "--set",
                               "strategy.mapping=[file_per_rank, shared_file]", "--set",
                               "backend.threads=[1,2,4]"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "6 cases")) << o.out;
  const std::vector<std::string> row = dry_run_row(o.out, 5);
  ASSERT_FALSE(row.empty()) << o.out;
  EXPECT_EQ(row[8] + " " + row.at(9), "backend.threads=4 strategy.mapping=shared_file") << o.out;
  const harness::Campaign loaded = harness::load_campaign(
      campaign, {"strategy.mapping=[file_per_rank,shared_file]", "backend.threads=[1,2,4]"});
  ASSERT_EQ(loaded.cases.size(), 6u);
  EXPECT_EQ(loaded.cases[5].swept.at("backend.threads"), nlohmann::json(4));
  EXPECT_EQ(loaded.cases[5].swept.at("strategy.mapping"), nlohmann::json("shared_file"));
  const Outcome typo = ckptbench({"run", campaign.string(), "--dry-run", "--set",
                                  "strategy.mapping=[file_per_rank,shard_file]"});
  EXPECT_EQ(typo.exit_code, 2) << typo.describe();
  EXPECT_TRUE(contains(typo.err, "did you mean `shared_file`? (value 2 of the sweep)"))
      << typo.describe();
}

}  // namespace
}  // namespace ckpt::integration
