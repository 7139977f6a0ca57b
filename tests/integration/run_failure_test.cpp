// `ckptbench run` when things go wrong: a full disk, a memory budget too small, a target that
// is missing or holds an older checkpoint, Ctrl-C, and a rank killed under mpirun.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A 48 MiB tmpfs as the target, so that two ~30 MiB checkpoints do not fit side by side.
class DiskFull : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(mount_point_);
    if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", 0, "size=48m") != 0) {
      GTEST_SKIP() << "cannot mount a 48 MiB tmpfs at " << mount_point_ << ": "
                   << std::strerror(errno) << " (needs root or CAP_SYS_ADMIN)";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_ && ::umount2(mount_point_.c_str(), 0) != 0)
      ::umount2(mount_point_.c_str(), MNT_DETACH);
  }

  Outcome run(const std::vector<std::string>& extra) {
    output_ = dir_ / ("results-" + std::to_string(runs_++));
    std::vector<std::string> args{"run", campaign_.string(), "--output", output_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return ckptbench(args);
  }

  // A restore of the case's `latest` checkpoint exits 0 and verifies.
  void expect_restore_verifies() {
    const Outcome restore = run({"--phase", "restore"});
    EXPECT_EQ(restore.exit_code, 0) << restore.describe();
    const auto restored = read_results(output_);
    ASSERT_EQ(restored.size(), 1u) << restore.describe();
    EXPECT_EQ(restored[0].at("verified"), true) << restored[0].dump();
  }

  Scratch dir_;
  fs::path mount_point_ = dir_ / "mnt";
  bool mounted_ = false;
  fs::path target_ = mount_point_ / "target";
  fs::path case_dir_ = target_ / "disk-full" / "case-0000";
  // Llama 3 8B weights scaled 512×: 29.92 MiB in one file.
  fs::path campaign_ =
      dir_.write("full.toml", campaign_toml("disk-full", target_, R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 512
[state]
scope = "weights"
[strategy]
mapping = "file_per_rank"
[cache]
policy = "none"
)"));
  fs::path output_;
  int runs_ = 0;
};

TEST_F(DiskFull, OverwriteThatRunsOutOfSpaceKeepsTheEarlierCheckpoint) {
  const Outcome first = run({"--phase", "checkpoint"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const fs::path kept = latest_checkpoint(case_dir_);
  ASSERT_FALSE(kept.empty()) << first.describe();
  const std::string manifest_before = read_text(kept / kManifest);
  ASSERT_FALSE(manifest_before.empty());
  const auto written = read_results(output_);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_GT(written[0].at("bytes_per_checkpoint").get<std::uint64_t>(), 28u << 20);

  // The new checkpoint must be complete before the old one goes, so both need room at once.
  const Outcome second = run({"--phase", "checkpoint", "--set", "campaign.overwrite=true"});
  EXPECT_EQ(second.exit_code, 1) << second.describe();
  EXPECT_TRUE(contains(second.err, "No space left on device")) << second.describe();
  EXPECT_TRUE(contains(second.err, case_dir_.string())) << second.describe();
  for (const auto& r : read_results(output_)) EXPECT_EQ(r.at("status"), "failed") << r.at("error");

  EXPECT_EQ(latest_checkpoint(case_dir_), kept)
      << "`latest` must still name the earlier checkpoint";
  ASSERT_TRUE(fs::is_regular_file(kept / kManifest)) << kept;
  EXPECT_TRUE(read_text(kept / kManifest) == manifest_before)
      << "the earlier checkpoint's manifest in " << kept << " was replaced";
  // The failed step's directory is gone (this run made it), and the error says so.
  EXPECT_EQ(step_dirs(case_dir_), std::vector<fs::path>{kept}) << second.describe();
  EXPECT_TRUE(contains(second.err, "this run removed its incomplete directory " +
                                       (case_dir_ / "step_0000002").string()))
      << second.describe();

  const Outcome restore = run({"--phase", "restore"});
  EXPECT_EQ(restore.exit_code, 0) << restore.describe();
  const auto restored = read_results(output_);
  ASSERT_EQ(restored.size(), 1u) << restore.describe();
  EXPECT_EQ(restored[0].at("status"), "ok");
  EXPECT_EQ(restored[0].at("verified"), true);
  EXPECT_EQ(restored[0].at("checkpoint_dir"), kept.string());
}

// Fills the tmpfs until `left` bytes are free (a file of the rest).
void leave_free(const fs::path& mount_point, std::uint64_t left) {
  const std::uint64_t free = fs::space(mount_point).available;
  ASSERT_GT(free, left);
  const int fd = ::open((mount_point / "filler").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_EQ(::posix_fallocate(fd, 0, static_cast<off_t>(free - left)), 0);
  ::close(fd);
}

// Disk full mid-data, with no earlier checkpoint: the partial step goes, and once space is freed
// the next run on the same target succeeds (before, the partial step kept the disk full).
TEST_F(DiskFull, FailureMidDataLeavesNoPartialStepAndTheNextRunSucceeds) {
  leave_free(mount_point_, 12u << 20);  // room for 12 of the 29.92 MiB
  const Outcome failed = run({"--phase", "checkpoint"});
  EXPECT_EQ(failed.exit_code, 1) << failed.describe();
  EXPECT_TRUE(contains(failed.err, "No space left on device")) << failed.describe();
  EXPECT_TRUE(contains(failed.err, "this run removed its incomplete directory " +
                                       (case_dir_ / "step_0000001").string()))
      << failed.describe();
  EXPECT_TRUE(step_dirs(case_dir_).empty()) << "a partial step directory stayed";
  EXPECT_FALSE(fs::exists(case_dir_ / "latest"));

  fs::remove(mount_point_ / "filler");
  const Outcome again = run({"--phase", "checkpoint"});
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  expect_restore_verifies();
}

// Disk full at the manifest (the data fits, its manifest does not): the step goes too, and the
// earlier complete checkpoint still restores.
TEST_F(DiskFull, FailureMidManifestRemovesTheStepAndKeepsTheEarlierCheckpoint) {
  const Outcome first = run({"--phase", "checkpoint"});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const fs::path kept = latest_checkpoint(case_dir_);
  ASSERT_FALSE(kept.empty());
  std::uint64_t data = 0;
  for (const auto& entry : fs::directory_iterator(kept)) {
    if (entry.path().filename() != kManifest) data += (entry.file_size() + 4095) / 4096 * 4096;
  }
  ASSERT_GT(fs::file_size(kept / kManifest), 3 * 4096u)
      << "the manifest must need more than the pages left";
  // Make room for this run's data and two pages more: its ~96 KiB manifest cannot follow.
  const fs::path aside = dir_ / "kept-aside";
  fs::create_directories(aside);
  fs::copy(kept, aside / kept.filename());
  fs::remove_all(kept);
  fs::create_directories(kept);
  fs::copy(aside / kept.filename() / kManifest,
           kept / kManifest);  // a small stand-in keeps `latest` valid
  leave_free(mount_point_, data + 2 * 4096);
  const Outcome second = run({"--phase", "checkpoint", "--set", "campaign.overwrite=true"});
  EXPECT_EQ(second.exit_code, 1) << second.describe();
  EXPECT_TRUE(contains(second.err, "manifest commit failed")) << second.describe();
  EXPECT_TRUE(contains(second.err, "No space left on device")) << second.describe();
  EXPECT_TRUE(contains(second.err, "this run removed its incomplete directory"))
      << second.describe();
  EXPECT_EQ(step_dirs(case_dir_), std::vector<fs::path>{kept}) << second.describe();
  EXPECT_EQ(latest_checkpoint(case_dir_), kept);

  // Put the earlier checkpoint's data back: it restores and verifies.
  fs::remove(mount_point_ / "filler");
  fs::remove_all(kept);
  fs::copy(aside / kept.filename(), kept);
  expect_restore_verifies();
}

TEST(RunSetupErrors, MemoryBudgetTooSmallStopsBeforeAnyIo) {
  Scratch dir;
  const fs::path target = dir / "target";
  const fs::path campaign =
      dir.write("budget.toml", campaign_toml("budget", target, R"(create_target = true
memory_budget = "1 MiB"
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
[state]
scope = "weights"
[cache]
policy = "none"
)"));
  // What the case needs per process, as --dry-run reports it (the "memory/process" column); the
  // dry run already says the run would fail.
  const Outcome dry = ckptbench({"run", campaign.string(), "--dry-run"});
  ASSERT_EQ(dry.exit_code, 2) << dry.describe();
  EXPECT_TRUE(contains(dry.err, "would fail: case 0: campaign.memory_budget")) << dry.describe();
  std::string need;
  std::stringstream lines(dry.out);
  for (std::string line; std::getline(lines, line);) {
    std::stringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words),
                               std::istream_iterator<std::string>()};
    if (w.size() >= 8 && w[0] == "0") need = w[6] + " " + w[7];
  }
  ASSERT_FALSE(need.empty()) << dry.describe();

  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "results").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "campaign.memory_budget")) << o.describe();
  EXPECT_TRUE(contains(o.err, "needs " + need)) << "expected `needs " << need << "`\n"
                                                << o.describe();
  const fs::path case_dir = target / "budget" / "case-0000";
  EXPECT_EQ(entries_under(case_dir), 0u) << "something was written under " << case_dir;
  EXPECT_FALSE(fs::exists(dir / "results")) << "a refused run made a results directory";
}

TEST(RunSetupErrors, MissingTargetWithoutCreateTarget) {
  Scratch dir;
  const fs::path target = dir / "absent" / "target";
  const fs::path campaign =
      dir.write("missing.toml", campaign_toml("missing", target, R"(iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
[state]
scope = "weights"
)"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "results").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "campaign.target")) << o.describe();
  EXPECT_TRUE(contains(o.err, target.string())) << o.describe();
  EXPECT_FALSE(fs::exists(target));
}

TEST(RunSetupErrors, OlderCheckpointWithoutOverwrite) {
  Scratch dir;
  const fs::path target = dir / "target";
  const fs::path campaign =
      dir.write("again.toml", campaign_toml("again", target, R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 1024
[state]
scope = "weights"
[cache]
policy = "none"
)"));
  const Outcome first = ckptbench({"run", campaign.string(), "--phase", "checkpoint", "--output",
                                   (dir / "results-0").string()});
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const fs::path case_dir = target / "again" / "case-0000";
  const fs::path kept = latest_checkpoint(case_dir);
  ASSERT_FALSE(kept.empty());
  const std::string manifest = read_text(kept / kManifest);

  const Outcome again =
      ckptbench({"run", campaign.string(), "--output", (dir / "results-1").string()});
  EXPECT_EQ(again.exit_code, 2) << again.describe();
  EXPECT_TRUE(contains(again.err, "campaign.overwrite")) << again.describe();
  EXPECT_EQ(latest_checkpoint(case_dir), kept);
  EXPECT_TRUE(read_text(kept / kManifest) == manifest)
      << "the older checkpoint's manifest in " << kept << " changed";
}

// Long enough never to finish on its own: 100,000 iterations of a ~1 MiB checkpoint.
std::string endless_campaign(const std::string& name, const fs::path& target, const fs::path& model,
                             int dp) {
  return campaign_toml(name, target,
                       "create_target = true\niterations = 100000\nwarmup = 0\n[model]\nname = \"" +
                           model.string() + "\"\n[parallel]\ndp = " + std::to_string(dp) +
                           "\nzero = 1\n[cache]\npolicy = \"none\"\n");
}

TEST(RunSignals, CtrlCEndsTheRunWith130AndKeepsMeasuredIterations) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign =
      dir.write("sigint.toml", endless_campaign("sigint", dir / "target", model, 1));
  const fs::path output = dir / "results";
  Process p({kBinary, "run", campaign.string(), "--output", output.string()});

  // Interrupt after ~1 s, once the first iteration has been measured.
  const auto deadline = Clock::now() + 30s;
  while (Clock::now() < deadline &&
         (p.elapsed() < 1.0 || !contains(p.err_so_far(), "iteration 1/"))) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(contains(p.err_so_far(), "iteration 1/")) << "no iteration finished in 30 s\n"
                                                        << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGINT), 0) << std::strerror(errno);
  const auto sent = Clock::now();
  const Outcome o = p.wait(10s);
  const double after_signal = std::chrono::duration<double>(Clock::now() - sent).count();
  EXPECT_FALSE(o.timed_out) << "still running 10 s after SIGINT\n" << o.describe();
  EXPECT_EQ(o.exit_code, 130) << o.describe();
  EXPECT_LT(after_signal, 5.0) << o.describe();

  const auto results = read_results(output);
  ASSERT_EQ(results.size(), 1u) << o.describe();
  const auto& r = results[0];
  EXPECT_EQ(r.at("status"), "interrupted") << r.dump();
  EXPECT_EQ(r.at("verified"), false);
  ASSERT_TRUE(r.at("samples").contains("write_seconds")) << r.dump();
  EXPECT_GE(r.at("samples").at("write_seconds").size(), 1u) << r.dump();
  EXPECT_TRUE(r.at("write_gib_per_s").is_number()) << r.dump();
}

TEST(RunUnderMpirun, KilledRankEndsTheJobWithoutAnOkResult) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign =
      dir.write("dying.toml", endless_campaign("dying", dir / "target", model, 2));
  // Rank 1 becomes ckptbench (exec keeps the pid) and is sent SIGKILL about 1 s later.
  const fs::path wrapper = dir.write("kill-rank-1.sh",
                                     "rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\n"
                                     "if [ \"$rank\" = 1 ]; then (sleep 1; kill -9 $$) & fi\n"
                                     "exec \"" +
                                         kBinary + "\" \"$@\"\n");
  const fs::path output = dir / "results";
  std::vector<std::string> args = mpirun_args(*mpirun, 2);
  args.insert(args.end(),
              {"sh", wrapper.string(), "run", campaign.string(), "--output", output.string()});
  const Outcome o = run_process(args, 20s);
  EXPECT_FALSE(o.timed_out) << "mpirun did not end within 20 s of starting\n" << o.describe();
  EXPECT_FALSE(o.exited() && o.exit_code == 0) << o.describe();
  for (const auto& r : read_results(output)) EXPECT_NE(r.at("status"), "ok") << r.dump();
}

// Interrupting a keeping run (--phase checkpoint) leaves its newest complete checkpoint as
// `latest`, restorable; the warm-up checkpoint and older ones are gone.
TEST(RunSignals, InterruptedCheckpointRunKeepsItsNewestCompleteCheckpoint) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign =
      dir.write("keep.toml", endless_campaign("keep", dir / "target", model, 1));
  const fs::path output = dir / "results";
  Process p({kBinary, "run", campaign.string(), "--phase", "checkpoint", "--set",
             "campaign.warmup=1", "--output", output.string()});
  const auto deadline = Clock::now() + 30s;
  while (Clock::now() < deadline && !contains(p.err_so_far(), "iteration 4/"))
    std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(contains(p.err_so_far(), "iteration 4/")) << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGINT), 0) << std::strerror(errno);
  const Outcome o = p.wait(10s);
  EXPECT_EQ(o.exit_code, 130) << o.describe();

  const fs::path case_dir = dir / "target" / "keep" / "case-0000";
  std::ifstream latest(case_dir / "latest");
  std::string name;
  ASSERT_TRUE(latest >> name) << "no latest after the interruption";
  std::vector<std::string> steps;
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    if (entry.is_directory()) steps.push_back(entry.path().filename().string());
  }
  ASSERT_EQ(steps, std::vector<std::string>{name}) << "only the newest complete checkpoint stays";
  EXPECT_NE(name, "step_0000001") << "the warm-up checkpoint is never kept";
  EXPECT_TRUE(fs::exists(case_dir / name / "ckptbench-manifest.json"));

  const Outcome restore = run_process({kBinary, "run", campaign.string(), "--phase", "restore",
                                       "--set", "campaign.iterations=1", "--set",
                                       "campaign.warmup=0", "--output", output.string()});
  EXPECT_EQ(restore.exit_code, 0) << restore.describe();
}

}  // namespace
}  // namespace ckpt::integration
