// The case lock of a keeping run and the exclusive step directories, in-process:
// flock locks belong to an open file description, so two acquisitions in one process conflict
// as two runs do.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>

#include "harness/checkpoint/target_check.hpp"
#include "harness/results/environment.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

Case case_under(const fs::path& target) {
  Case c;
  c.target = target;
  c.campaign = "locked";
  c.index = 3;
  return c;
}

TEST(CaseLock, SecondAcquisitionRefusesNamingTheHolder) {
  const test_support::TempDir dir;
  const Case c = case_under(dir.path());
  const fs::path case_dir = case_directory(c);
  fs::create_directories(case_dir);
  EXPECT_FALSE(lock_problem(c)) << "no lock file yet";
  std::string problem, note;
  {
    const CaseLock held = CaseLock::acquire(case_dir, problem, note);
    ASSERT_EQ(problem, "");
    EXPECT_EQ(note, "");
    std::ifstream in(case_dir / ".ckptbench.lock");
    std::string host, pid;
    in >> host >> pid;
    EXPECT_EQ(host, host_name());
    EXPECT_EQ(pid, std::to_string(::getpid()));

    const std::string expected =
        "campaign.target: " + case_dir.string() + " is in use by another ckptbench run (host " +
        host_name() + ", pid " + std::to_string(::getpid()) + "), which holds " +
        (case_dir / ".ckptbench.lock").string() +
        " — wait for it to finish, or choose another campaign.name or campaign.target";
    const CaseLock second = CaseLock::acquire(case_dir, problem, note);
    EXPECT_EQ(problem, expected);
    EXPECT_EQ(lock_problem(c).value_or(""), expected);
  }
  // Released with its owner: the next run takes it, and the check passes.
  EXPECT_FALSE(lock_problem(c));
  problem.clear();
  const CaseLock again = CaseLock::acquire(case_dir, problem, note);
  EXPECT_EQ(problem, "");
}

TEST(CaseLock, ChecksOfOneRunDoNotBlockEachOther) {
  const test_support::TempDir dir;
  const Case c = case_under(dir.path());
  fs::create_directories(case_directory(c));
  std::string problem, note;
  { const CaseLock once = CaseLock::acquire(case_directory(c), problem, note); }  // leaves the file
  // Another process of the same run checking at this moment holds a shared lock.
  const int probe = ::open((case_directory(c) / ".ckptbench.lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(probe, 0);
  ASSERT_EQ(::flock(probe, LOCK_SH | LOCK_NB), 0);
  EXPECT_FALSE(lock_problem(c));
  ::close(probe);
}

// The state letter of process `pid` in /proc ('?' when it is gone).
char process_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return '?';
  const auto paren = text.rfind(')');
  return paren + 2 < text.size() ? text[paren + 2] : '?';
}

// A killed run whose main thread has ended while another thread still ends (a flush thread in
// fsync) keeps its flock until that thread is gone. A restore started then (right after mpirun
// returned) waits for it instead of refusing.
TEST(CaseLock, ARestoreWaitsForAHolderThatIsEndingInsteadOfRefusing) {
  const test_support::TempDir dir;
  const Case c = case_under(dir.path());
  const fs::path case_dir = case_directory(c);
  fs::create_directories(case_dir);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::string problem, note;
    new CaseLock(
        CaseLock::acquire(case_dir, problem, note));  // never freed: the process's end releases it
    pthread_t last;
    ::pthread_create(
        &last, nullptr,
        [](void*) -> void* {
          ::usleep(300000);
          ::_exit(0);
        },
        nullptr);
    ::write(ready[1], problem.empty() ? "y" : "n", 1);
    // The main thread ends first, as a killed process's may: the raw exit of this thread alone
    // (pthread_exit would unwind into the test framework's handlers).
    ::syscall(SYS_exit, 0);
  }
  char locked = 0;
  ASSERT_EQ(::read(ready[0], &locked, 1), 1);
  ASSERT_EQ(locked, 'y');
  for (int i = 0; i < 200 && process_state(child) != 'Z'; ++i) ::usleep(1000);
  ASSERT_EQ(process_state(child), 'Z') << "the child's main thread has ended";
  std::string problem, note;
  const auto start = std::chrono::steady_clock::now();
  const CaseLock restore = CaseLock::acquire_shared(case_dir, problem, note);
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(problem, "");
  EXPECT_GT(waited, 0.05) << "the child's last thread held the lock for 300 ms";
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ::close(ready[0]);
  ::close(ready[1]);
}

// Step numbers only grow: a run starts above the highest step directory of its layout that the
// case holds, never in a free lower number (a higher number is always the newer checkpoint).
TEST(StepDirectory, NextStepNumberIsAboveTheHighestOfTheLayout) {
  const test_support::TempDir dir;
  Case c = case_under(dir.path());
  const fs::path case_dir = case_directory(c);
  fs::create_directories(case_dir);
  EXPECT_EQ(next_step_number(c), 1);
  fs::create_directories(case_dir / "step_0000008");
  fs::create_directories(case_dir / "step_0000003");
  fs::create_directories(case_dir / "iter_0000050");  // another layout's name
  fs::create_directories(case_dir / "step_12");       // not this layout's spelling
  std::ofstream(case_dir / "latest") << "step_0000008\n";
  EXPECT_EQ(next_step_number(c), 9);
  c.directory_layout = DirectoryLayout::megatron;
  EXPECT_EQ(next_step_number(c), 51);
  c.directory_layout = DirectoryLayout::deepspeed;
  EXPECT_EQ(next_step_number(c), 1);
}

TEST(StepDirectory, TakesTheNextFreeNumberAndNeverAnExistingOne) {
  const test_support::TempDir dir;
  const auto name_of = [&](std::int64_t step) {
    return dir.path() / ("step_" + std::to_string(step));
  };
  fs::create_directories(name_of(1));
  fs::create_directories(name_of(2));
  EXPECT_EQ(create_step_directory(1, name_of), 3);
  EXPECT_TRUE(fs::is_directory(name_of(3)));
  EXPECT_EQ(create_step_directory(1, name_of), 4) << "3 is taken now";
  const auto missing = [&](std::int64_t) { return dir.path() / "absent" / "step"; };
  try {
    create_step_directory(1, missing);
    FAIL() << "no error for a missing parent";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot create checkpoint directory " +
                                         (dir.path() / "absent" / "step").string() +
                                         ": No such file or directory");
  }
}

}  // namespace
}  // namespace ckpt::harness
