// Crash consistency of the background engines: a process killed (SIGKILL) while a flush runs
// leaves the newest committed checkpoint restorable and verified; the in-flight one has no
// manifest and is never named `latest`.
#include <signal.h>

#include <iterator>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A checkpoint due every 20 ms iteration, flushed in the background with fsync (tens of ms for
// ~60 MiB): a flush is in flight nearly all the time. Runs until killed.
// `engine`: more [engine] keys.
std::string flushing_campaign(const fs::path& target, const std::string& engine = "") {
  return campaign_toml(
      "crash", target,
      "create_target = true\nkeep = true\n[model]\nname = \"llama3-8b\"\nscale = 256\n"
      "[state]\nscope = \"weights\"\n[backend]\nname = \"posix\"\nsync = \"fsync\"\n"
      "[cache]\npolicy = \"none\"\n[training]\niterations = 1000000\niteration_seconds = 0.02\n"
      "checkpoint_every = 1\n[engine]\nname = \"async\"\n" +
          engine);
}

// Waits until the case has committed `count` checkpoints (its `latest` changed that often).
bool await_commits(Process& p, const fs::path& case_dir, int count) {
  std::string seen;
  int changes = 0;
  const auto deadline = Clock::now() + 60s;
  while (Clock::now() < deadline && changes < count) {
    std::ifstream in(case_dir / "latest");
    std::string name;
    if (in >> name && name != seen) {
      seen = name;
      ++changes;
    }
    std::this_thread::sleep_for(5ms);
  }
  (void)p;
  return changes >= count;
}

// Whether any thread of process `pid` still runs. Its files (and so its flock) are closed when its
// last thread has ended: a killed process's main thread can be a zombie while another (a flush
// thread in fsync) still ends, and a zombie whose threads have all ended may stay unreaped here
// (PID 1 of a container need not reap), so neither "zombie" nor "gone" alone is the test.
bool running(pid_t pid) {
  const fs::path proc = "/proc/" + std::to_string(pid);
  std::ifstream stat(proc / "stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const auto paren = text.rfind(')');  // the state follows the command name, which may hold spaces
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  if (text[paren + 2] != 'Z') return true;
  std::error_code ec;
  const auto threads =
      std::distance(fs::directory_iterator(proc / "task", ec), fs::directory_iterator());
  return !ec && threads > 1;
}

// Waits until every pid listed in `pids_file` (one a line) has ended; returns those still running
// after `timeout`. mpirun can return while ranks it killed are still exiting (tearing down their
// memory), and process 0 holds the case lock until its files are closed.
std::vector<pid_t> await_ended(const fs::path& pids_file, std::chrono::seconds timeout) {
  std::vector<pid_t> pids;
  std::ifstream in(pids_file);
  for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    std::erase_if(pids, [](pid_t pid) { return !running(pid); });
    if (pids.empty()) break;
    std::this_thread::sleep_for(10ms);
  }
  return pids;
}

void expect_newest_committed_restores(const fs::path& campaign, const fs::path& case_dir,
                                      const fs::path& output) {
  const fs::path latest = latest_checkpoint(case_dir);
  ASSERT_TRUE(fs::exists(latest / "ckptbench-manifest.json")) << latest;
  for (const auto& entry : fs::directory_iterator(case_dir)) {
    if (!entry.is_directory() || entry.path() == latest) continue;
    // A checkpoint in flight, or the previous committed one not yet removed: never `latest`.
    EXPECT_NE(entry.path().filename(), latest.filename());
  }
  const Outcome restore =
      ckptbench({"run", campaign.string(), "--phase", "restore", "--set", "campaign.iterations=1",
                 "--set", "campaign.warmup=0", "--output", output.string()});
  ASSERT_EQ(restore.exit_code, 0) << restore.describe();
  const auto results = read_results(output);
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results.back().at("verified"), true) << results.back().dump();
}

TEST(EngineCrash, SigkillDuringABackgroundFlushLeavesTheNewestCommittedCheckpointRestorable) {
  Scratch dir;
  const fs::path campaign = dir.write("crash.toml", flushing_campaign(dir / "target"));
  const fs::path case_dir = dir / "target" / "crash" / "case-0000";
  Process p({kBinary, "run", campaign.string(), "--phase", "checkpoint", "--output",
             (dir / "results").string()});
  ASSERT_TRUE(await_commits(p, case_dir, 5)) << "no 5 commits in 60 s\n" << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGKILL), 0) << std::strerror(errno);
  const Outcome killed = p.wait(10s);
  EXPECT_EQ(killed.term_signal, SIGKILL) << killed.describe();
  expect_newest_committed_restores(campaign, case_dir, dir / "restored");
}

// The same with a pool of 4 MiB, a ring of 2 MiB chunks the flush streams from.
TEST(EngineCrash, SigkillDuringARingFlushLeavesTheNewestCommittedCheckpointRestorable) {
  Scratch dir;
  const fs::path campaign =
      dir.write("crash.toml", flushing_campaign(dir / "target", "host_pool_bytes = \"4 MiB\"\n"));
  const fs::path case_dir = dir / "target" / "crash" / "case-0000";
  Process p({kBinary, "run", campaign.string(), "--phase", "checkpoint", "--output",
             (dir / "results").string()});
  ASSERT_TRUE(await_commits(p, case_dir, 3)) << "no 3 commits in 60 s\n" << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGKILL), 0) << std::strerror(errno);
  const Outcome killed = p.wait(10s);
  EXPECT_EQ(killed.term_signal, SIGKILL) << killed.describe();
  expect_newest_committed_restores(campaign, case_dir, dir / "restored");
}

// The Ctrl-C rule: finish. SIGINT ends the loop at the next iteration; the flush in flight is
// finished and committed, so every checkpoint the results list is committed.
TEST(EngineCrash, CtrlCFinishesTheInFlightFlushAndCommitsIt) {
  Scratch dir;
  const fs::path campaign = dir.write("crash.toml", flushing_campaign(dir / "target"));
  const fs::path case_dir = dir / "target" / "crash" / "case-0000";
  const fs::path output = dir / "results";
  Process p(
      {kBinary, "run", campaign.string(), "--phase", "checkpoint", "--output", output.string()});
  ASSERT_TRUE(await_commits(p, case_dir, 3)) << "no 3 commits in 60 s\n" << p.err_so_far();
  ASSERT_EQ(::kill(p.pid(), SIGINT), 0) << std::strerror(errno);
  const Outcome o = p.wait(20s);
  EXPECT_EQ(o.exit_code, 130) << o.describe();
  const auto results = read_results(output);
  ASSERT_EQ(results.size(), 1u) << o.describe();
  const auto& t = results[0].at("training");
  EXPECT_EQ(results[0].at("status"), "interrupted");
  EXPECT_EQ(t.at("interrupted"), true);
  ASSERT_GE(t.at("checkpoints").size(), 3u) << t.dump();
  for (const auto& c : t.at("checkpoints")) EXPECT_EQ(c.at("committed"), true) << c.dump();
  EXPECT_EQ(t.at("committed_iteration"), t.at("checkpoints").back().at("iteration"));
  EXPECT_EQ(latest_checkpoint(case_dir).string(), t.at("committed_dir").get<std::string>());
  expect_newest_committed_restores(campaign, case_dir, dir / "restored");
}

TEST(EngineCrash, AKilledProcessUnderMpirunLeavesTheNewestCommittedCheckpointRestorable) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign =
      dir.write("crash.toml", flushing_campaign(dir / "target") + "[parallel]\ndp = 4\nzero = 1\n");
  const fs::path case_dir = dir / "target" / "crash" / "case-0000";
  // Each rank notes its pid and becomes ckptbench (exec keeps the pid); rank 1 kills itself once
  // 5 checkpoints are committed.
  const fs::path pids = dir / "pids";
  const fs::path wrapper =
      dir.write("kill-rank-1.sh",
                "echo $$ >> '" + pids.string() +
                    "'\nrank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}\n"
                    "if [ \"$rank\" = 1 ]; then (n=0; last=; while [ $n -lt 5 ]; do l=$(cat '" +
                    (case_dir / "latest").string() +
                    "' 2>/dev/null); if [ -n \"$l\" ] && [ \"$l\" != \"$last\" ]; then n=$((n+1)); "
                    "last=$l; fi; "
                    "sleep 0.005; done; kill -9 $$) & fi\n"
                    "exec \"" +
                    kBinary + "\" \"$@\"\n");
  std::vector<std::string> args = mpirun_args(*mpirun, 4);
  args.insert(args.end(), {"sh", wrapper.string(), "run", campaign.string(), "--phase",
                           "checkpoint", "--output", (dir / "results").string()});
  const Outcome o = run_process(args, 90s);
  EXPECT_FALSE(o.timed_out) << o.describe();
  EXPECT_FALSE(o.exited() && o.exit_code == 0) << o.describe();
  const std::vector<pid_t> left = await_ended(pids, 60s);
  ASSERT_TRUE(left.empty())
      << left.size() << " process(es) of the killed job still run 60 s after mpirun returned, "
      << "e.g. pid " << left.front();
  expect_newest_committed_restores(campaign, case_dir, dir / "restored");
}

// Collective backends from the flush thread (MPI_THREAD_MULTIPLE, requested only for such a case):
// async over mpiio, file per rank and one shared file, under mpirun -np 4; every checkpoint
// commits and the restore verifies the newest. hdf5 needs a thread-safe HDF5 library: with
// Debian's it is refused before anything is written, naming both keys and the reason.
TEST(EngineMpi, AsyncOverMpiioUnderMpirunCommitsAndRestores) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  const auto listed = nlohmann::json::parse(ckptbench({"backends", "--json"}).out);
  for (const auto& b : listed) {
    if (b.at("name") == "mpiio" && !b.at("available").get<bool>())
      GTEST_SKIP() << "mpiio is not built";
  }
  Scratch dir;
  const fs::path campaign = dir.write(
      "mpi.toml",
      campaign_toml(
          "mpi", dir / "target",
          "create_target = true\n[model]\nname = \"llama3-8b\"\nscale = 2048\n[parallel]\ndp = 4\n"
          "zero = 1\n[state]\nscope = \"full\"\n[strategy]\nmapping = [\"file_per_rank\", "
          "\"shared_file\"]\n"
          "[backend]\nname = \"mpiio\"\nsync = \"fsync\"\n[cache]\npolicy = \"none\"\n[training]\n"
          "iterations = 4\niteration_seconds = 0.1\ncheckpoint_every = 1\n[engine]\nname = "
          "\"async\"\n"));
  std::vector<std::string> args = mpirun_args(*mpirun, 4);
  args.insert(args.end(),
              {kBinary, "run", campaign.string(), "--output", (dir / "results").string()});
  const Outcome o = run_process(args, 120s);
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "results");
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_EQ(r.at("verified"), true);
    EXPECT_EQ(r.at("training").at("committed_iteration"), 3);
    for (const auto& c : r.at("training").at("checkpoints")) EXPECT_EQ(c.at("committed"), true);
  }
  for (const auto& b : listed) {
    if (b.at("name") != "hdf5" || !b.at("available").get<bool>()) continue;
    std::vector<std::string> h5 = mpirun_args(*mpirun, 4);
    h5.insert(h5.end(), {kBinary, "run", campaign.string(), "--set", "backend.name=hdf5",
                         "--output", (dir / "h5").string()});
    const Outcome refused = run_process(h5, 120s);
    if (b.at("capabilities").value("background_thread", false)) {
      EXPECT_EQ(refused.exit_code, 0) << refused.describe();
    } else {
      EXPECT_EQ(refused.exit_code, 2) << refused.describe();
      EXPECT_TRUE(
          contains(refused.err,
                   "engine.name = \"async\" with backend.name = \"hdf5\": the engine's flush "
                   "thread would call the backend, and the HDF5 library of this build"))
          << refused.describe();
      EXPECT_TRUE(contains(refused.err, "is not thread-safe (built without --enable-threadsafe"))
          << refused.describe();
    }
  }
}

// One process throws between collectives (std::bad_alloc right after the checkpoint of iteration 1
// claimed its directory, EngineHooks::throw_after_claim): every process sees the failure at the
// next agreement, that checkpoint's partial directory is removed, the one committed before stays,
// and no process is left waiting in a collective. Deterministic: the throw is at a fixed point of
// the loop, whatever the timing.
TEST(EngineMpi, AnExceptionOnOneProcessRemovesThePartialStepEverywhere) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  for (const std::string engine : {"sync", "async"}) {
    SCOPED_TRACE("engine " + engine);
    Scratch dir;
    std::vector<std::string> args = mpirun_args(*mpirun, 2);
    args.insert(args.end(), {CKPT_TRAINING_THROW_BIN, dir.path().string(), engine});
    const Outcome o = run_process(args, 90s);
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    EXPECT_TRUE(contains(
        o.out, "error: checkpoint " + (dir / "step_1").string() +
                   " failed: process 1: out of memory (std::bad_alloc) — removed " +
                   (dir / "step_1").string() + "; earlier complete checkpoints are untouched\n"))
        << o.describe();
    EXPECT_TRUE(contains(o.out, "committed 0\n")) << o.describe();
    EXPECT_TRUE(fs::exists(dir / "step_0" / "complete")) << o.describe();
    EXPECT_FALSE(fs::exists(dir / "step_1")) << o.describe();
    EXPECT_FALSE(fs::exists(dir / "step_2")) << "the loop stopped at the failure\n" << o.describe();
  }
}

}  // namespace
}  // namespace ckpt::integration
