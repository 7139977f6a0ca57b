// backend.posix.throttle_percent, the deliberate slowdown benchmarks/gate_proof.sh proves the
// gate with: each request is followed by a sleep of that share of its time, the bytes are the
// same, and a value out of range is refused naming the key.
#include "backends/posix/throttle.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "backends/registry.hpp"
#include "tests/backends/backend_test_support.hpp"

namespace ckpt::backends {
namespace {

using namespace ckpt::backends::test_support;
using namespace std::chrono_literals;

TEST(PosixThrottle, SleepsThatShareOfEachRequestAfterIt) {
  const posix::Throttle half(50);
  EXPECT_TRUE(half.active());
  EXPECT_FALSE(posix::Throttle(0).active());
  const auto start = std::chrono::steady_clock::now();
  const int result = half([] {
    std::this_thread::sleep_for(40ms);
    return 7;
  });
  EXPECT_EQ(result, 7);
  // The request took at least 40 ms, the throttle then slept at least half of what it measured.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 60ms);
}

TEST(PosixThrottle, ThrottledBackendMovesTheSameBytes) {
  TempDir dir;
  IoPlan plan;
  plan.files.push_back(file_plan(dir.file("t.bin"), {{0, 0, kBlock}, {kBlock, kBlock, kBlock}}));
  Buffer source(2 * kBlock);
  source.fill(3);
  const auto b =
      make_backend("posix", IoSettings{.sync = SyncPolicy::fsync}, {{"throttle_percent", "100"}});
  const IoOutcome written = b->write(plan, source.view());
  ASSERT_TRUE(written.ok()) << *written.error;
  Buffer back(2 * kBlock);
  const IoOutcome read = b->read(plan, back.view());
  ASSERT_TRUE(read.ok()) << *read.error;
  expect_same_bytes(back.data(), source.data(), source.size(), "throttled posix read back");
}

TEST(PosixThrottle, OutOfRangeIsRefusedNamingTheKey) {
  try {
    make_backend("posix", {}, {{"throttle_percent", "-5"}});
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("backend.posix.throttle_percent"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ckpt::backends
