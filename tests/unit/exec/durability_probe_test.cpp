// The durability probe on real directories: a disk file system is probed and left clean, a
// missing directory is reported with the call and its error, and tmpfs (memory only) is flagged.
#include "harness/exec/durability_probe.hpp"

#include <gtest/gtest.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using test_support::TempDir;

TEST(DurabilityProbe, ProbesADirectoryAndLeavesNothingThere) {
  const TempDir dir;
  const DurabilityProbe p = probe_durability(dir.path());
  ASSERT_TRUE(p.probed) << p.why_not;
  EXPECT_EQ(p.bytes, 4u << 20);
  EXPECT_GT(p.write_seconds, 0.0);
  EXPECT_GE(p.fsync_seconds, 0.0);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(DurabilityProbe, AMissingDirectoryIsNotProbedAndSaysWhy) {
  const TempDir dir;
  const std::filesystem::path missing = dir.path() / "missing";
  const DurabilityProbe p = probe_durability(missing);
  EXPECT_FALSE(p.probed);
  EXPECT_FALSE(p.too_fast());
  EXPECT_EQ(p.why_not, "open " + missing.string() + "/.ckptbench-durability-probe-" +
                           std::to_string(::getpid()) + ": No such file or directory");
}

// tmpfs keeps files in memory: its fsync moves nothing and returns in about a microsecond, under
// the 15 us that 4 MiB take at the limit. Five probes of two fsyncs each: a machine too loaded to
// run one of ten fsyncs without a 15 us preemption inside the call is not one tests run on.
TEST(DurabilityProbe, TmpfsIsFlaggedAsTooFast) {
  struct statfs info {};
  constexpr long kTmpfsMagic = 0x01021994;
  if (::statfs("/dev/shm", &info) != 0 || static_cast<long>(info.f_type) != kTmpfsMagic)
    GTEST_SKIP() << "/dev/shm is not tmpfs here";
  bool flagged = false;
  for (int i = 0; i < 5 && !flagged; ++i) {
    const DurabilityProbe p = probe_durability("/dev/shm");
    if (!p.probed) GTEST_SKIP() << "/dev/shm: " << p.why_not;
    flagged = p.too_fast();
  }
  EXPECT_TRUE(flagged);
}

}  // namespace
}  // namespace ckpt::harness
