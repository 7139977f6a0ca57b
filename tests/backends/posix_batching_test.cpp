// posix with more files than it may hold open (half the soft RLIMIT_NOFILE): the soft limit is
// lowered to 48 for the test, so opening the plan's 100 files at once would fail with EMFILE.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

using namespace ckpt::backends::test_support;

class LowOpenFileLimit : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto all = list_backends();
    if (std::none_of(all.begin(), all.end(),
                     [](const BackendInfo& b) { return b.name == "posix" && b.available; })) {
      GTEST_SKIP() << "posix is not compiled in";
    }
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved_), 0);
    rlimit low = saved_;
    low.rlim_cur = 48;
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
    lowered_ = true;
  }
  void TearDown() override {
    if (lowered_) ::setrlimit(RLIMIT_NOFILE, &saved_);
  }

  // 100 files of two 4 KiB extents each, every tenth file empty (created, nothing moved).
  IoPlan plan() const {
    IoPlan p;
    for (std::uint64_t i = 0; i < kFiles; ++i) {
      std::vector<Extent> extents;
      if (i % 10 != 9)
        extents = {{0, i * 2 * kBlock, kBlock}, {kBlock, (i * 2 + 1) * kBlock, kBlock}};
      p.files.push_back(file_plan(dir_.file("f" + std::to_string(i) + ".bin"), extents));
    }
    return p;
  }

  static constexpr std::uint64_t kFiles = 100;
  TempDir dir_;
  rlimit saved_{};
  bool lowered_ = false;
};

TEST_F(LowOpenFileLimit, PosixWritesAndReadsInBatchesAndSaysSo) {
  const IoPlan p = plan();
  Buffer source(kFiles * 2 * kBlock);
  source.fill(7);
  const auto backend =
      make_backend("posix", IoSettings{.sync = SyncPolicy::fsync, .fallocate = true, .threads = 4});
  const IoOutcome written = backend->write(p, source.view());
  expect_ok(written, p);
  ASSERT_EQ(written.notes.size(), 1u);
  EXPECT_TRUE(contains(written.notes[0],
                       "posix: 100 files per plan, more than the 24 it keeps open at once"))
      << written.notes[0];
  for (const FilePlan& f : p.files)
    ASSERT_TRUE(fs::exists(f.path)) << "empty files are created too: " << f.path;
  expect_files_hold(p, source);
  expect_read_back(*backend, p, source);
}

// Staging streams a plan in parts; each part's files go in batches as well.
TEST_F(LowOpenFileLimit, PosixStreamedPartsGoInBatches) {
  const IoPlan p = plan();
  Buffer source(kFiles * 2 * kBlock);
  source.fill(11);
  const auto backend = make_backend("posix", IoSettings{.sync = SyncPolicy::fdatasync});
  auto stream = backend->begin(p, true);
  for (std::size_t half = 0; half < 2; ++half) {
    IoPlan part = p;
    for (FilePlan& f : part.files) {
      if (!f.extents.empty()) f.extents = {f.extents[half]};
    }
    stream->transfer(part, source.view());
  }
  const IoOutcome written = stream->finish();
  expect_ok(written, p);
  expect_files_hold(p, source);
  expect_read_back(*backend, p, source);
}

}  // namespace
}  // namespace ckpt::backends
