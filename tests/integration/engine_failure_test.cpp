// The training loop's engines when a checkpoint fails or the run is stopped: a full disk (a real
// tmpfs) and short memory (`ulimit -v`) fail that checkpoint with one message and exit 1, remove
// its partial step directory (never leaving a manifest in it) and keep the previous checkpoint
// restorable; SIGTERM commits the in-flight checkpoint and retires what the run superseded; step
// numbers only grow.
#include <signal.h>
#include <sys/mount.h>

#include <regex>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// Each engine of the training loop: sync, async and lazy with a pool of one checkpoint, and
// async through a ring of chunks (a pool smaller than the checkpoint).
struct Engine {
  std::string label;
  std::string toml;  // the [engine] table
};

const std::vector<Engine>& engines() {
  static const std::vector<Engine> all{
      {"sync", "[engine]\nname = \"sync\"\n"},
      {"async", "[engine]\nname = \"async\"\n"},
      {"lazy", "[engine]\nname = \"lazy\"\n"},
      {"ring", "[engine]\nname = \"async\"\nhost_pool_bytes = \"4 MiB\"\n"},
  };
  return all;
}

// The lines of `err` that report an error or a failed case.
int error_lines(const std::string& err) {
  int count = 0;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("ckptbench: error") || line.starts_with("ckptbench: case ")) ++count;
  }
  return count;
}

// The number of step directory `dir` (step_0000007: 7).
std::int64_t step_number(const fs::path& dir) {
  const std::string name = dir.filename().string();
  return std::stoll(name.substr(name.find_last_not_of("0123456789") + 1));
}

// `ckptbench run campaign --phase phase --output output`.
Outcome run_phase(const fs::path& campaign, const std::string& phase, const fs::path& output) {
  std::vector<std::string> args{"run", campaign.string(), "--phase"};
  args.push_back(phase);
  args.push_back("--output");
  args.push_back(output.string());
  return ckptbench(args);
}

// A restore of the case's `latest` checkpoint exits 0 and verifies it.
void expect_restore_verifies(const fs::path& campaign, const fs::path& output) {
  const Outcome restore = run_phase(campaign, "restore", output);
  ASSERT_EQ(restore.exit_code, 0) << restore.describe();
  const auto results = read_results(output);
  ASSERT_EQ(results.size(), 1u) << restore.describe();
  EXPECT_EQ(results[0].at("verified"), true) << results[0].dump();
}

// A training run of Llama 3 8B weights scaled `scale`× (512: 29.92 MiB in one file) under `engine`,
// a checkpoint after every iteration.
std::string training_campaign(const fs::path& target, const Engine& engine, int scale,
                              int iterations) {
  return campaign_toml(
      "engines", target,
      "create_target = true\niterations = 1\nwarmup = 0\n[model]\nname = \"llama3-8b\"\nscale = " +
          std::to_string(scale) +
          "\n[state]\nscope = \"weights\"\n[strategy]\nmapping = \"file_per_rank\"\n[cache]\n"
          "policy = \"none\"\n[training]\niterations = " +
          std::to_string(iterations) + "\niteration_seconds = 0.02\ncheckpoint_every = 1\n" +
          engine.toml);
}

// A 48 MiB tmpfs as the target: one ~30 MiB checkpoint fits, the next one beside it does not.
class EngineDiskFull : public ::testing::Test {
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

  Scratch dir_;
  fs::path mount_point_ = dir_ / "mnt";
  bool mounted_ = false;
};

// ENOSPC in the second checkpoint's flush, each engine: exit 1 with one message naming the error
// and the removed directory; the partial step is gone (the space is free again), the first
// checkpoint is still `latest` and restores verified.
TEST_F(EngineDiskFull, ENoSpcInATrainingFlushRemovesThePartialStepForEachEngine) {
  for (const Engine& engine : engines()) {
    SCOPED_TRACE(engine.label);
    const fs::path target = mount_point_ / engine.label;
    const fs::path case_dir = target / "engines" / "case-0000";
    const fs::path campaign =
        dir_.write(engine.label + ".toml", training_campaign(target, engine, 512, 3));
    const fs::path output = dir_ / engine.label;
    const Outcome o = run_phase(campaign, "checkpoint", output);
    EXPECT_EQ(o.exit_code, 1) << o.describe();
    EXPECT_EQ(error_lines(o.err), 1) << o.describe();
    EXPECT_TRUE(contains(o.err, "No space left on device")) << o.describe();
    EXPECT_TRUE(contains(o.err, "this run removed its incomplete directory " +
                                    (case_dir / "step_0000002").string() +
                                    "; earlier complete checkpoints are untouched"))
        << o.describe();
    EXPECT_EQ(step_dirs(case_dir), std::vector<fs::path>{case_dir / "step_0000001"})
        << o.describe();
    EXPECT_EQ(latest_checkpoint(case_dir), case_dir / "step_0000001");
    expect_restore_verifies(campaign, dir_ / (engine.label + "-restored"));
    fs::remove_all(target);  // room for the next engine
  }
}

// SIGTERM to a kept training run that superseded an earlier run's checkpoint, each engine: the
// run ends with 130 after committing its in-flight checkpoint, retires the earlier run's as a
// finished run does, and numbers its checkpoints above the earlier ones (never reusing a free
// lower number), so the only step directory left is `latest`, and it restores verified.
TEST(EngineInterrupt, SigtermRetiresTheSupersededCheckpointAndStepNumbersOnlyGrow) {
  for (const Engine& engine : engines()) {
    SCOPED_TRACE(engine.label);
    Scratch dir;
    const fs::path case_dir = dir / "target" / "engines" / "case-0000";
    const fs::path campaign =
        dir.write("c.toml", training_campaign(dir / "target", engine, 2048, 3));
    const fs::path output = dir / "first";
    const Outcome first = run_phase(campaign, "checkpoint", output);
    ASSERT_EQ(first.exit_code, 0) << first.describe();
    ASSERT_EQ(step_dirs(case_dir), std::vector<fs::path>{case_dir / "step_0000003"})
        << "steps 1 and 2 retired";

    Process p({kBinary, "run", campaign.string(), "--phase", "checkpoint", "--set",
               "campaign.overwrite=true", "--set", "training.iterations=1000000", "--output",
               (dir / "second").string()});
    // Two checkpoints of the second run committed: `latest` no longer names step 3.
    const auto deadline = Clock::now() + 60s;
    while (Clock::now() < deadline && step_number(latest_checkpoint(case_dir)) < 5)
      std::this_thread::sleep_for(5ms);
    ASSERT_GE(step_number(latest_checkpoint(case_dir)), 5) << p.err_so_far();
    ASSERT_EQ(::kill(p.pid(), SIGTERM), 0) << std::strerror(errno);
    const Outcome second = p.wait(30s);
    EXPECT_EQ(second.exit_code, 130) << second.describe();
    const fs::path latest = latest_checkpoint(case_dir);
    EXPECT_GE(step_number(latest), 5) << latest;
    EXPECT_EQ(step_dirs(case_dir), std::vector<fs::path>{latest}) << second.describe();
    expect_restore_verifies(campaign, dir / "restored");
  }
}

// `ckptbench run campaign --phase checkpoint` with its address space limited to `kib` KiB. One
// malloc arena: under the limit, glibc tries (and fails) to reserve a 128 MiB arena for a new
// thread at every allocation, which makes each run take seconds.
Outcome run_limited(const fs::path& campaign, const fs::path& output, std::int64_t kib) {
  return run_process({"bash", "-c",
                      "ulimit -v \"$3\" && MALLOC_ARENA_MAX=1 exec \"$0\" run \"$1\" --phase "
                      "checkpoint --output \"$2\"",
                      kBinary, campaign.string(), output.string(), std::to_string(kib)});
}

// Short memory (`ulimit -v` from just below what a run needs, down by 5 MiB steps), each
// background engine: whatever fails (the flush thread's start, the flush, the commit's JSON, the
// manifest), the process never dies of a signal (std::terminate was one), a failed run exits 1
// (2 when it cannot start: the state buffer) with one message, the failed checkpoint's directory
// is gone (only the one committed before may stay, with its manifest), and `latest` names a
// complete checkpoint that restores verified.

TEST(EngineMemory, UlimitVJustBelowWhatARunNeedsFailsCleanlyForEachBackgroundEngine) {
  if (kSanitizedBuild) {
    GTEST_SKIP() << "a sanitized ckptbench reserves terabytes of shadow address space at start, "
                    "so ulimit -v cannot bound it; the plain build runs this test";
  }
  for (const Engine& engine : engines()) {
    if (engine.label == "sync")
      continue;  // its flush runs on the loop's thread (the engine's unit tests cover it)
    SCOPED_TRACE(engine.label);
    Scratch dir;
    const fs::path case_dir = dir / "target" / "engines" / "case-0000";
    const fs::path campaign =
        dir.write("c.toml", training_campaign(dir / "target", engine, 2048, 3));
    int runs = 0;
    const auto attempt = [&](std::int64_t kib) {
      fs::remove_all(dir / "target");
      return run_limited(campaign, dir / ("out-" + std::to_string(runs++)), kib);
    };
    // The least limit (in 8 MiB steps) under which the run succeeds.
    std::int64_t fails = 16 << 10, passes = 512 << 10;
    ASSERT_EQ(attempt(passes).exit_code, 0) << "512 MiB must be enough";
    while (passes - fails > (8 << 10)) {
      const std::int64_t mid = (fails + passes) / 2;
      (attempt(mid).exit_code == 0 ? passes : fails) = mid;
    }
    int failed = 0;
    fs::path restorable;
    for (std::int64_t kib = passes - (5 << 10); kib > fails - (20 << 10) && kib > 0;
         kib -= 5 << 10) {
      SCOPED_TRACE("ulimit -v " + std::to_string(kib));
      const Outcome o = attempt(kib);
      ASSERT_EQ(o.term_signal, 0) << o.describe();
      ASSERT_TRUE(o.exit_code == 0 || o.exit_code == 1 || o.exit_code == 2) << o.describe();
      if (o.exit_code != 0) {
        EXPECT_EQ(error_lines(o.err), 1) << o.describe();
      }
      if (o.exit_code != 0) ++failed;
      const std::vector<fs::path> steps = step_dirs(case_dir);
      for (const fs::path& step : steps) {
        EXPECT_TRUE(fs::exists(step / kManifest)) << step << " is left without a manifest\n"
                                                  << o.describe();
      }
      const fs::path latest = latest_checkpoint(case_dir);
      if (o.exit_code !=
          0) {  // the failed checkpoint is gone; only the one committed before may stay
        EXPECT_TRUE(steps.empty() || steps == std::vector<fs::path>{latest}) << o.describe();
      }
      if (fs::exists(case_dir / "latest")) {
        EXPECT_TRUE(fs::exists(latest / kManifest)) << "`latest` names " << latest << "\n"
                                                    << o.describe();
      }
      if (o.exit_code == 1 && !latest.empty())
        break;  // a failure after a committed checkpoint: restore it
    }
    EXPECT_GE(failed, 1) << "no limit below the least passing one (" << passes << " KiB) failed";
    if (!latest_checkpoint(case_dir).empty()) expect_restore_verifies(campaign, dir / "restored");
  }
}

}  // namespace
}  // namespace ckpt::integration
