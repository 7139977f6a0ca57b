// The one executor: the calls in order through a real backend (posix on a temp directory), the
// first failure ends them and names whose bytes they were, a call that throws goes through or
// becomes its error.
#include "harness/exec/execute_plans.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

backends::IoPlan plan_of(const fs::path& file, std::uint64_t memory_offset, std::uint64_t length) {
  backends::IoPlan plan;
  plan.files.push_back({.path = file.string(), .extents = {{0, memory_offset, length}}});
  return plan;
}

std::vector<std::byte> counting_bytes(std::size_t n) {
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>(i * 7 % 251);
  return bytes;
}

TEST(ExecutePlans, MovesEveryCallInOrderAndSumsWhatTheBackendReports) {
  const test_support::TempDir dir;
  const auto posix = backends::make_backend("posix", {});
  const std::vector<std::byte> data = counting_bytes(12288);
  std::vector<std::byte> memory = data;
  const backends::MemoryView view{memory.data(), memory.size(), backends::MemoryKind::host};
  const std::vector<backends::IoPlan> plans{plan_of(dir.path() / "a.bin", 0, 4096),
                                            plan_of(dir.path() / "b.bin", 4096, 8192)};
  const std::vector<PlanCall> calls{{&plans[0], view, 0, "rank 0"}, {&plans[1], view, 0, "rank 1"}};

  const Execution written = execute_plans(*posix, calls, true);
  EXPECT_EQ(written.error, "");
  EXPECT_EQ(written.bytes, 12288u);
  EXPECT_EQ(written.seconds.size(), 2u);
  EXPECT_EQ(fs::file_size(dir.path() / "a.bin"), 4096u);
  EXPECT_EQ(fs::file_size(dir.path() / "b.bin"), 8192u);

  std::fill(memory.begin(), memory.end(), std::byte{0});
  const Execution read = execute_plans(*posix, calls, false);
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(read.bytes, 12288u);
  EXPECT_EQ(memory, data);
}

TEST(ExecutePlans, StopsAfterTheFirstFailedCallAndNamesWhoseBytesItMoved) {
  const test_support::TempDir dir;
  const auto posix = backends::make_backend("posix", {});
  std::vector<std::byte> memory = counting_bytes(8192);
  const backends::MemoryView view{memory.data(), memory.size(), backends::MemoryKind::host};
  const std::vector<backends::IoPlan> plans{plan_of(dir.path() / "a.bin", 0, 4096),
                                            plan_of(dir.path() / "gone.bin", 0, 4096),
                                            plan_of(dir.path() / "c.bin", 4096, 4096)};
  ASSERT_EQ(execute_plans(*posix, {{&plans[0], view, 0, "rank 4"}}, true).error, "");

  const Execution read = execute_plans(*posix,
                                       {{&plans[0], view, 0, "rank 4"},
                                        {&plans[1], view, 0, "rank 5"},
                                        {&plans[2], view, 0, "rank 6"}},
                                       false);
  EXPECT_EQ(read.error.rfind("rank 5: ", 0), 0u) << read.error;
  EXPECT_NE(read.error.find("gone.bin"), std::string::npos) << read.error;
  EXPECT_EQ(read.seconds.size(), 2u) << "rank 6's call is not made";
  EXPECT_EQ(read.bytes, 4096u);
  EXPECT_FALSE(fs::exists(dir.path() / "c.bin"));
}

TEST(ExecutePlans, ACallThatThrowsGoesThroughOrBecomesItsError) {
  const test_support::TempDir dir;
  const auto posix = backends::make_backend("posix", {});
  std::vector<std::byte> memory(4096);
  // posix cannot address device memory: it refuses the call before any I/O.
  const backends::MemoryView device{memory.data(), memory.size(), backends::MemoryKind::device};
  const backends::IoPlan plan = plan_of(dir.path() / "a.bin", 0, 4096);
  const std::vector<PlanCall> calls{{&plan, device, 0, "rank 9"}};
  EXPECT_THROW(execute_plans(*posix, calls, true), std::invalid_argument);
  const Execution recorded = execute_plans(*posix, calls, true, nullptr, OnThrow::record);
  EXPECT_EQ(recorded.error.rfind("rank 9: ", 0), 0u) << recorded.error;
  EXPECT_TRUE(recorded.seconds.empty());
  EXPECT_EQ(recorded.bytes, 0u);
}

}  // namespace
}  // namespace ckpt::harness
