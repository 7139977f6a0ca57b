// Per-request latency (IoSettings::request_latency) of posix and uring with several worker
// threads and queues: one histogram per worker, merged after the join, every request counted
// once. The names match CI's TSan filter (*osix*, *ring*).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

using namespace ckpt::backends::test_support;

constexpr std::uint64_t kExtents = 64;

bool available(const std::string& name) {
  const auto all = list_backends();
  return std::any_of(all.begin(), all.end(),
                     [&](const BackendInfo& b) { return b.name == name && b.available; });
}

// 64 extents of one block with a block-sized hole between them: split over 4 workers by bytes,
// 16 whole extents each, one request per extent.
IoPlan holed_plan(const TempDir& dir) {
  IoPlan plan;
  std::vector<Extent> extents;
  for (std::uint64_t i = 0; i < kExtents; ++i)
    extents.push_back({2 * i * kBlock, i * kBlock, kBlock});
  plan.files.push_back(file_plan(dir.file("holed.bin"), extents));
  return plan;
}

void expect_every_request_timed(const std::string& backend, IoSettings settings) {
  if (!available(backend))
    GTEST_SKIP() << backend << " is not available in this build or on this machine";
  TempDir dir;
  const IoPlan plan = holed_plan(dir);
  Buffer source(kExtents * kBlock);
  source.fill(7);
  settings.request_latency = true;
  const auto b = make_backend(backend, settings, {});
  const IoOutcome written = b->write(plan, source.view());
  ASSERT_TRUE(written.ok()) << *written.error;
  ASSERT_TRUE(written.latency.has_value());
  EXPECT_EQ(written.latency->count(), kExtents);
  EXPECT_GT(written.latency->min(), 0u);
  EXPECT_LE(written.latency->percentile(0.5), written.latency->percentile(0.99));
  EXPECT_LE(written.latency->percentile(0.999), written.latency->max());
  Buffer back(kExtents * kBlock);
  const IoOutcome read = b->read(plan, back.view());
  ASSERT_TRUE(read.ok()) << *read.error;
  ASSERT_TRUE(read.latency.has_value());
  EXPECT_EQ(read.latency->count(),
            kExtents);  // the read's own requests: the write's were handed over
  expect_same_bytes(back.data(), source.data(), source.size(), backend + " read back");

  settings.request_latency = false;
  const auto quiet = make_backend(backend, settings, {});
  EXPECT_FALSE(quiet->write(plan, source.view()).latency.has_value());
}

TEST(PosixLatency, FourWorkersTimeEveryRequestOnce) {
  expect_every_request_timed("posix", IoSettings{.sync = SyncPolicy::fsync, .threads = 4});
}

TEST(UringLatency, TwoWorkersWithQueuesTimeEverySubmissionToItsCompletion) {
  expect_every_request_timed("uring",
                             IoSettings{.sync = SyncPolicy::fsync, .threads = 2, .queue_depth = 8});
}

}  // namespace
}  // namespace ckpt::backends
