// The case lock of a keeping run and the exclusive step directories (issue 13), in-process:
// flock locks belong to an open file description, so two acquisitions in one process conflict
// as two runs do.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "harness/run/environment.hpp"
#include "harness/run/target_check.hpp"
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

    const std::string expected = "campaign.target: " + case_dir.string() + " is in use by another ckptbench run (host " +
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

TEST(StepDirectory, TakesTheNextFreeNumberAndNeverAnExistingOne) {
  const test_support::TempDir dir;
  const auto name_of = [&](std::int64_t step) { return dir.path() / ("step_" + std::to_string(step)); };
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
    EXPECT_EQ(std::string(e.what()), "cannot create checkpoint directory " + (dir.path() / "absent" / "step").string() +
                                         ": No such file or directory");
  }
}

}  // namespace
}  // namespace ckpt::harness
