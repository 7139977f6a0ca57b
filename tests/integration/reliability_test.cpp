// Two runs on one case, names used as paths, `latest` pointers that leave the case
// directory, more files than the open-file limit, and a model file with the wrong ending, each
// through the real binary.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A keeping-size campaign of the tiny model: `iterations` checkpoints of ~1 MiB.
std::string tiny_campaign(const std::string& name, const fs::path& target, const fs::path& model,
                          int iterations) {
  return campaign_toml(
      name, target,
      "create_target = true\noverwrite = true\niterations = " + std::to_string(iterations) +
          "\nwarmup = 0\n[model]\nname = \"" + model.string() + "\"\n[cache]\npolicy = \"none\"\n");
}

std::string host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

// Waits until `p` has printed `text` on stderr (or 30 s pass).
bool await(const Process& p, const std::string& text) {
  const auto deadline = Clock::now() + 30s;
  while (Clock::now() < deadline && !contains(p.err_so_far(), text))
    std::this_thread::sleep_for(10ms);
  return contains(p.err_so_far(), text);
}

// Campaign DIR/NAME.toml (the tiny model, one iteration) run once with --phase checkpoint;
// returns its case directory (empty when the run failed).
fs::path checkpoint_once(const Scratch& dir, const std::string& name) {
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign =
      dir.write(name + ".toml", tiny_campaign(name, dir / "target", model, 1));
  const Outcome made = ckptbench(
      {"run", campaign.string(), "--phase", "checkpoint", "--output", (dir / "r0").string()});
  EXPECT_EQ(made.exit_code, 0) << made.describe();
  if (made.exit_code != 0) return {};
  return dir / "target" / name / "case-0000";
}

class SecondRun : public ::testing::Test {
 protected:
  Scratch dir_;
  fs::path model_ = dir_.write("tiny.toml", kTinyModel);
  fs::path target_ = dir_ / "target";
  fs::path campaign_ = dir_.write("busy.toml", tiny_campaign("busy", target_, model_, 100000));
  fs::path case_dir_ = target_ / "busy" / "case-0000";
  std::string in_use_by(pid_t pid) const {
    return case_dir_.string() + " is in use by another ckptbench run (host " + host() + ", pid " +
           std::to_string(pid) + ")";
  }
  // The first run ends (on its own: exit 0; else on SIGINT: 130) and keeps its newest
  // checkpoint, which must restore and verify.
  void finish_and_restore(Process& first, bool interrupt = true) {
    if (interrupt) {
      ASSERT_EQ(::kill(first.pid(), SIGINT), 0);
    }
    const Outcome o = first.wait(interrupt ? 20s : 180s);
    EXPECT_EQ(o.exit_code, interrupt ? 130 : 0) << o.describe();
    EXPECT_FALSE(contains(o.err, "failed")) << o.describe();
    const Outcome restore =
        ckptbench({"run", campaign_.string(), "--phase", "restore", "--set",
                   "campaign.iterations=1", "--output", (dir_ / "restored").string()});
    ASSERT_EQ(restore.exit_code, 0) << restore.describe();
    const auto r = read_results(dir_ / "restored");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].at("verified"), true) << r[0].dump();
  }
};

// Two `--phase checkpoint` runs on one case: the second refuses at once, naming the first's host
// and pid; the first goes on, and its checkpoint restores and verifies.
TEST_F(SecondRun, OnTheSameCaseRefusesNamingTheFirstRunsHostAndPid) {
  Process first({kBinary, "run", campaign_.string(), "--phase", "checkpoint", "--set",
                 "campaign.iterations=200", "--output", (dir_ / "first").string()});
  ASSERT_TRUE(await(first, "iteration 3/")) << first.err_so_far();
  const Outcome second = ckptbench(
      {"run", campaign_.string(), "--phase", "checkpoint", "--output", (dir_ / "second").string()},
      30s);
  EXPECT_EQ(second.exit_code, 2) << second.describe();
  EXPECT_TRUE(contains(second.err, in_use_by(first.pid()))) << second.describe();
  EXPECT_TRUE(contains(second.err, (case_dir_ / ".ckptbench.lock").string())) << second.describe();
  EXPECT_FALSE(fs::exists(dir_ / "second")) << "the refused run made a results directory";
  // --dry-run checks the lock as well.
  const Outcome dry =
      ckptbench({"run", campaign_.string(), "--phase", "checkpoint", "--dry-run"}, 30s);
  EXPECT_EQ(dry.exit_code, 2) << dry.describe();
  EXPECT_TRUE(contains(dry.err, "would fail: case 0: campaign.target: " + in_use_by(first.pid())))
      << dry.describe();
  // campaign.keep in the campaign (not --phase) is a keeping run too.
  const Outcome kept = ckptbench({"run", campaign_.string(), "--set", "campaign.keep=true", "--set",
                                  "campaign.iterations=1", "--output", (dir_ / "third").string()},
                                 30s);
  EXPECT_EQ(kept.exit_code, 2) << kept.describe();
  EXPECT_TRUE(contains(kept.err, in_use_by(first.pid()))) << kept.describe();
  EXPECT_FALSE(contains(first.err_so_far(), "iteration 200/"))
      << "the first run ended before the second started";
  finish_and_restore(first, false);
  const auto r = read_results(dir_ / "first");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].at("status"), "ok") << r[0].dump();
  // Once the first run ended, its lock is free.
  const Outcome after = ckptbench({"run", campaign_.string(), "--phase", "checkpoint", "--set",
                                   "campaign.iterations=2", "--output", (dir_ / "after").string()});
  EXPECT_EQ(after.exit_code, 0) << after.describe();
}

// A run that keeps nothing takes no lock, but its step directories are made exclusively: beside
// a keeping run on the same case, both number past each other's and both verify.
TEST_F(SecondRun, ThatKeepsNothingSharesNoStepDirectory) {
  Process first({kBinary, "run", campaign_.string(), "--phase", "checkpoint", "--output",
                 (dir_ / "first").string()});
  ASSERT_TRUE(await(first, "iteration 3/")) << first.err_so_far();
  const Outcome both = ckptbench({"run", campaign_.string(), "--set", "campaign.iterations=40",
                                  "--output", (dir_ / "both").string()},
                                 60s);
  EXPECT_EQ(both.exit_code, 0) << both.describe();
  const auto r = read_results(dir_ / "both");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].at("verified"), true) << r[0].dump();
  finish_and_restore(first);
}

// The same under mpirun: process 0 finds the lock held and every process stops with exit 2.
TEST_F(SecondRun, UnderMpirunRefusesOnEveryProcess) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Process first({kBinary, "run", campaign_.string(), "--phase", "checkpoint", "--output",
                 (dir_ / "first").string()});
  ASSERT_TRUE(await(first, "iteration 3/")) << first.err_so_far();
  std::vector<std::string> args = mpirun_args(*mpirun, 2);
  args.insert(args.end(), {kBinary, "run", campaign_.string(), "--phase", "checkpoint", "--set",
                           "parallel.dp=2", "--output", (dir_ / "second").string()});
  const Outcome second = run_process(args, 60s);
  EXPECT_EQ(second.exit_code, 2) << second.describe();
  EXPECT_TRUE(contains(second.err, in_use_by(first.pid()))) << second.describe();
  finish_and_restore(first);
}

// A restore holds the case shared: beside a keeping run it refuses, naming that run.
TEST_F(SecondRun, RestoreBesideAKeepingRunRefusesNamingIt) {
  Process first({kBinary, "run", campaign_.string(), "--phase", "checkpoint", "--output",
                 (dir_ / "first").string()});
  ASSERT_TRUE(await(first, "iteration 3/")) << first.err_so_far();
  const Outcome restore =
      ckptbench({"run", campaign_.string(), "--phase", "restore", "--set", "campaign.iterations=1",
                 "--output", (dir_ / "restore").string()},
                30s);
  EXPECT_EQ(restore.exit_code, 2) << restore.describe();
  EXPECT_TRUE(contains(restore.err, in_use_by(first.pid()))) << restore.describe();
  EXPECT_FALSE(fs::exists(dir_ / "restore")) << "the refused restore made a results directory";
  finish_and_restore(first);
}

// ... and a keeping run beside a restore refuses naming the restore's host and pid (it would
// retire the checkpoint being read); other restores run beside it; the restore's name file goes
// with it.
TEST_F(SecondRun, KeepingRunBesideARestoreRefusesNamingTheRestore) {
  const Outcome made = ckptbench({"run", campaign_.string(), "--phase", "checkpoint", "--set",
                                  "campaign.iterations=1", "--output", (dir_ / "made").string()});
  ASSERT_EQ(made.exit_code, 0) << made.describe();
  Process restoring({kBinary, "run", campaign_.string(), "--phase", "restore", "--output",
                     (dir_ / "long").string()});
  ASSERT_TRUE(await(restoring, "iteration 3/")) << restoring.err_so_far();
  const fs::path name_file =
      case_dir_ / (".ckptbench.restore." + host() + "." + std::to_string(restoring.pid()));
  EXPECT_TRUE(fs::exists(name_file));
  const Outcome keeping =
      ckptbench({"run", campaign_.string(), "--phase", "checkpoint", "--set",
                 "campaign.iterations=1", "--output", (dir_ / "keeping").string()},
                30s);
  EXPECT_EQ(keeping.exit_code, 2) << keeping.describe();
  EXPECT_TRUE(contains(keeping.err, case_dir_.string() +
                                        " is in use by a ckptbench restore (host " + host() +
                                        ", pid " + std::to_string(restoring.pid()) + ")"))
      << keeping.describe();
  const Outcome beside =
      ckptbench({"run", campaign_.string(), "--phase", "restore", "--set", "campaign.iterations=1",
                 "--output", (dir_ / "beside").string()},
                30s);
  EXPECT_EQ(beside.exit_code, 0) << beside.describe();
  ASSERT_EQ(::kill(restoring.pid(), SIGINT), 0);
  const Outcome o = restoring.wait(20s);
  EXPECT_EQ(o.exit_code, 130) << o.describe();
  EXPECT_FALSE(fs::exists(name_file)) << "the restore left its name file";
  const Outcome after = ckptbench({"run", campaign_.string(), "--phase", "checkpoint", "--set",
                                   "campaign.iterations=1", "--output", (dir_ / "after").string()});
  EXPECT_EQ(after.exit_code, 0) << after.describe();
}

// An overwriting run retires the older complete checkpoint it replaces (the one `latest` named)
// and its own, nothing else: a leftover step without a manifest, another complete checkpoint and
// an unrelated directory stay, and numbering skips the leftover.
TEST(Ownership, OverwriteRemovesOnlyWhatItSupersedes) {
  Scratch dir;
  const fs::path campaign = dir / "own.toml";
  const fs::path case_dir = checkpoint_once(dir, "own");
  ASSERT_EQ(latest_checkpoint(case_dir), case_dir / "step_0000001");
  dir.write("target/own/case-0000/step_0000002/someone-elses.bin", "partial");
  dir.write("target/own/case-0000/notes/readme.txt", "mine");
  fs::copy(case_dir / "step_0000001", case_dir / "complete-but-not-latest");
  const Outcome second = ckptbench({"run", campaign.string(), "--phase", "checkpoint", "--set",
                                    "campaign.iterations=2", "--output", (dir / "r1").string()});
  ASSERT_EQ(second.exit_code, 0) << second.describe();
  EXPECT_EQ(latest_checkpoint(case_dir), case_dir / "step_0000004");
  EXPECT_FALSE(fs::exists(case_dir / "step_0000001"))
      << "the older complete checkpoint it replaced stays";
  EXPECT_FALSE(fs::exists(case_dir / "step_0000003")) << "its own superseded checkpoint stays";
  EXPECT_EQ(read_text(case_dir / "step_0000002" / "someone-elses.bin"), "partial");
  EXPECT_EQ(read_text(case_dir / "notes" / "readme.txt"), "mine");
  EXPECT_TRUE(fs::exists(case_dir / "complete-but-not-latest" / kManifest))
      << "only what `latest` named is superseded";
}

// campaign.name names directories under campaign.target and --output: one path component only.
// The training loop's checkpoints claim their step directories the same way: a leftover at the
// number the second checkpoint would take is skipped, and stays as it was.
TEST(Ownership, TrainingCheckpointsSkipAStepDirectoryThatExists) {
  Scratch dir;
  const fs::path campaign = dir / "own.toml";
  const fs::path case_dir = checkpoint_once(dir, "own");
  ASSERT_EQ(latest_checkpoint(case_dir), case_dir / "step_0000001");
  dir.write("target/own/case-0000/step_0000003/someone-elses.bin", "partial");
  for (const char* engine : {"sync", "async"}) {
    SCOPED_TRACE(engine);
    const Outcome trained =
        ckptbench({"run", campaign.string(), "--phase", "checkpoint", "--set",
                   "training.iterations=2", "--set", "training.iteration_seconds=0.05", "--set",
                   "training.checkpoint_every=1", "--set", std::string("engine.name=") + engine,
                   "--output", (dir / (std::string("r-") + engine)).string()});
    ASSERT_EQ(trained.exit_code, 0) << trained.describe();
    EXPECT_NE(latest_checkpoint(case_dir), case_dir / "step_0000003");
    EXPECT_TRUE(fs::exists(latest_checkpoint(case_dir) / kManifest));
    EXPECT_EQ(read_text(case_dir / "step_0000003" / "someone-elses.bin"), "partial");
    EXPECT_FALSE(fs::exists(case_dir / "step_0000003" / kManifest))
        << "a checkpoint was written into the leftover";
  }
}

TEST(HostileNames, CampaignNameMustBeOnePathComponentOfAtMost200Bytes) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path target = dir / "deep" / "er" / "target";
  fs::create_directories(target);
  const fs::path campaign = dir.write("names.toml", tiny_campaign("fine", target, model, 1));
  const std::vector<std::pair<std::string, std::string>> bad{
      {"../../x", "contains '/'"}, {"/abs", "contains '/'"},
      {"a/b", "contains '/'"},     {"..", "is \".\" or \"..\""},
      {".", "is \".\" or \"..\""}, {std::string(300, 'n'), "is 300 bytes long; at most 200 bytes"},
      {"", "must not be empty"}};
  for (const auto& [name, why] : bad) {
    const Outcome o = ckptbench({"run", campaign.string(), "--set", "campaign.name=" + name,
                                 "--output", (dir / "results").string()});
    EXPECT_EQ(o.exit_code, 2) << name << "\n" << o.describe();
    EXPECT_TRUE(contains(o.err, "`campaign.name`")) << o.describe();
    EXPECT_TRUE(contains(o.err, why)) << o.describe();
    if (!name.empty() && name.size() < 200) {
      EXPECT_TRUE(contains(o.err, "at most 200 bytes")) << o.describe();
    }
  }
  // The same names in the campaign file, and a NUL byte.
  for (const std::string& name :
       {std::string("../../x"), std::string("/abs"), std::string("x\\u0000y")}) {
    const fs::path file = dir.write("bad.toml", tiny_campaign(name, target, model, 1));
    const Outcome o = ckptbench({"run", file.string(), "--output", (dir / "results").string()});
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, "bad.toml:2: `campaign.name`")) << o.describe();
  }
  const Outcome nul = ckptbench({"run", (dir / "bad.toml").string(), "--dry-run"});
  EXPECT_TRUE(contains(nul.err, "\"x\\x00y\" contains a NUL byte")) << nul.describe();
  // Nothing was written anywhere: not beside the target, not above it, not under --output.
  EXPECT_EQ(entries_under(target), 0u);
  EXPECT_FALSE(fs::exists(dir / "deep" / "x"));
  EXPECT_FALSE(fs::exists(dir / "x"));
  EXPECT_FALSE(fs::exists("/abs"));
  EXPECT_FALSE(fs::exists(dir / "results"));
  // 200 bytes is allowed.
  const Outcome longest =
      ckptbench({"run", campaign.string(), "--set", "campaign.name=" + std::string(200, 'n'),
                 "--output", (dir / "results").string()});
  EXPECT_EQ(longest.exit_code, 0) << longest.describe();
}

// A `latest` pointer that leads out of the case directory is refused, not followed.
TEST(HostileNames, LatestPointerOutsideTheCaseDirectoryIsRefused) {
  Scratch dir;
  const fs::path campaign = dir / "ptr.toml";
  const fs::path case_dir = checkpoint_once(dir, "ptr");
  const fs::path kept = latest_checkpoint(case_dir);
  ASSERT_FALSE(kept.empty());
  const std::string good = read_text(case_dir / "latest");
  // A complete copy outside, which a followed pointer would restore.
  fs::copy(kept, dir / "outside");
  fs::create_directory_symlink(dir / "outside", case_dir / "link");
  int run = 1;
  for (const std::string& pointer :
       {std::string("../../../outside"), (dir / "outside").string(), std::string(".."),
        std::string("."), std::string("link"), kept.filename().string() + "/../../../../outside"}) {
    std::ofstream(case_dir / "latest") << pointer << "\n";
    const Outcome o = ckptbench({"run", campaign.string(), "--phase", "restore", "--output",
                                 (dir / ("r" + std::to_string(run++))).string()});
    EXPECT_EQ(o.exit_code, 2) << pointer << "\n" << o.describe();
    EXPECT_TRUE(contains(o.err, (case_dir / "latest").string() + " points to \"" + pointer +
                                    "\", which is not a checkpoint directory inside " +
                                    case_dir.string()))
        << o.describe();
  }
  std::ofstream(case_dir / "latest") << good;
  const Outcome o = ckptbench(
      {"run", campaign.string(), "--phase", "restore", "--output", (dir / "r9").string()});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
}

// A file-per-tensor checkpoint of Llama 3 8B (291 files) under `ulimit -n 64`: posix and uring
// open them a batch at a time and say so in the notes; the checkpoint restores and verifies.
class ManyFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(ManyFiles, FilePerTensorCheckpointBeyondTheOpenFileLimitVerifies) {
  const std::string backend = GetParam();
  Scratch dir;
  const fs::path campaign =
      dir.write("files.toml", campaign_toml("files", dir / "target", R"(create_target = true
iterations = 1
warmup = 0
[model]
name = "llama3-8b"
scale = 4096
[state]
scope = "weights"
[strategy]
mapping = "file_per_tensor"
[backend]
name = ")" + backend + R"("
sync = "fsync"
threads = 2
)" + (backend == "uring" ? "queue_depth = 8\n" : "") + R"([cache]
policy = "none"
)"));
  const fs::path output = dir / "results";
  const Outcome o =
      run_process({"bash", "-c", "ulimit -n 64 && exec \"$0\" run \"$1\" --output \"$2\"", kBinary,
                   campaign.string(), output.string()});
  if (backend == "uring" && contains(o.err, "io_uring"))
    GTEST_SKIP() << "io_uring is not usable here: " << o.err;
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto r = read_results(output);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].at("status"), "ok") << r[0].dump();
  EXPECT_EQ(r[0].at("verified"), true) << r[0].dump();
  EXPECT_EQ(r[0].at("files_per_checkpoint"), 291) << r[0].dump();
  EXPECT_TRUE(contains(r[0].at("notes").dump(),
                       backend + ": 291 files per plan, more than the 32 it keeps open at once"))
      << r[0].at("notes").dump();
}

INSTANTIATE_TEST_SUITE_P(Backends, ManyFiles, ::testing::Values("posix", "uring"),
                         [](const auto& param_info) { return param_info.param; });

// Only the soft limit lowered: the run raises it to the hard limit and records that.
TEST(OpenFileLimit, SoftOpenFileLimitIsRaisedAndNoted) {
  Scratch dir;
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  const fs::path campaign = dir.write("soft.toml", tiny_campaign("soft", dir / "target", model, 1));
  const Outcome hard = run_process({"bash", "-c", "ulimit -H -n"});
  const std::string limit = hard.out.substr(0, hard.out.find('\n'));
  if (limit == "unlimited" || std::stoll(limit) <= 100) GTEST_SKIP() << "hard limit " << limit;
  const Outcome o =
      run_process({"bash", "-c", "ulimit -S -n 100 && exec \"$0\" run \"$1\" --output \"$2\"",
                   kBinary, campaign.string(), (dir / "results").string()});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto r = read_results(dir / "results");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(contains(r[0].at("notes").dump(),
                       "open files: soft RLIMIT_NOFILE raised from 100 to the hard limit " + limit))
      << r[0].at("notes").dump();
}

// A model file that is there but ends in neither .toml nor .json says so (not "no such file").
TEST(ModelFiles, ExistingFileWithAnotherEndingIsReportedAsSuch) {
  Scratch dir;
  const fs::path yaml = dir.write("tiny.yaml", kTinyModel);
  const fs::path bare = dir.write("tiny", kTinyModel);
  const Outcome o = ckptbench({"layout", "--model", yaml.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "the file exists but has extension .yaml")) << o.describe();
  EXPECT_FALSE(contains(o.err, "no such")) << o.describe();
  const Outcome b = ckptbench({"layout", "--model", bare.string()});
  EXPECT_EQ(b.exit_code, 2) << b.describe();
  EXPECT_TRUE(contains(b.err, "the file exists but has no extension")) << b.describe();
  const fs::path campaign = dir.write("c.toml", tiny_campaign("m", dir / "target", yaml, 1));
  const Outcome run = ckptbench({"run", campaign.string(), "--dry-run"});
  EXPECT_EQ(run.exit_code, 2) << run.describe();
  EXPECT_TRUE(contains(run.err, "`model.name`")) << run.describe();
  EXPECT_TRUE(contains(run.err, "the file exists but has extension .yaml")) << run.describe();
  const Outcome missing = ckptbench({"layout", "--model", (dir / "absent.yaml").string()});
  EXPECT_TRUE(contains(missing.err, "no such model in the zoo and no such file"))
      << missing.describe();
}

}  // namespace
}  // namespace ckpt::integration
