// The one executor: the calls in order through a real backend (posix on a temp directory), the
// first failure ends them and names whose bytes they were, a call that throws goes through or
// becomes its error; kept open, a run of calls of the same files opens them once.
#include "harness/exec/execute_plans.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "tests/unit/memory_test_support.hpp"
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

// Calls of files a, a, b, a: kept open, each run of calls of the same files opens them once and
// closes them once (three opens, four transfers); per call, every call opens its files.
TEST(PlanExecutor, KeptOpenOpensEachRunOfCallsOfTheSameFilesOnce) {
  std::vector<std::byte> memory = counting_bytes(16384);
  const backends::MemoryView view{memory.data(), memory.size(), backends::MemoryKind::host};
  const auto at = [](const char* file, std::uint64_t offset) {  // file offset = memory offset
    backends::IoPlan plan;
    plan.files.push_back({.path = file, .extents = {{offset, offset, 4096}}});
    return plan;
  };
  const std::vector<backends::IoPlan> plans{at("a", 0), at("a", 4096), at("b", 8192),
                                            at("a", 12288)};
  for (const Opening opening : {Opening::kept_open, Opening::per_call}) {
    std::vector<std::string> log;
    memory_test::MemoryBackend backend(log, false);
    PlanExecutor executor(backend, true, {.opening = opening});
    for (const backends::IoPlan& plan : plans) EXPECT_TRUE(executor.call({&plan, view, 0, "r"}));
    const Execution done = executor.finish();
    EXPECT_EQ(done.error, "");
    EXPECT_EQ(done.bytes, 16384u);
    const bool kept = opening == Opening::kept_open;
    EXPECT_EQ(backend.opens, (std::map<std::string, int>{{"a", kept ? 2 : 3}, {"b", 1}}));
    EXPECT_EQ(done.seconds.size(), kept ? 3u : 4u);
    EXPECT_EQ(std::count(log.begin(), log.end(), "transfer"), 4);
    EXPECT_EQ(std::count(log.begin(), log.end(), "close"), kept ? 3 : 4);
    ASSERT_EQ(backend.files["a"].size(), 16384u);
    EXPECT_TRUE(std::equal(memory.begin(), memory.begin() + 8192, backend.files["a"].begin()));
    EXPECT_TRUE(
        std::equal(memory.begin() + 12288, memory.end(), backend.files["a"].begin() + 12288));
  }
}

// A kept-open read of a missing file fails at that call, names whose bytes they were, closes what
// was open, and makes no further call.
TEST(PlanExecutor, KeptOpenStopsAtTheFirstFailedCall) {
  const test_support::TempDir dir;
  const auto posix = backends::make_backend("posix", {});
  std::vector<std::byte> memory = counting_bytes(8192);
  const backends::MemoryView view{memory.data(), memory.size(), backends::MemoryKind::host};
  const std::vector<backends::IoPlan> plans{plan_of(dir.path() / "a.bin", 0, 4096),
                                            plan_of(dir.path() / "gone.bin", 0, 4096),
                                            plan_of(dir.path() / "a.bin", 4096, 4096)};
  ASSERT_EQ(execute_plans(*posix, {{&plans[0], view, 0, ""}}, true).error, "");
  PlanExecutor reader(*posix, false, {.opening = Opening::kept_open});
  EXPECT_TRUE(reader.call({&plans[0], view, 0, "load"}));
  EXPECT_FALSE(reader.call({&plans[1], view, 0, "load"}));
  EXPECT_EQ(reader.done().error.rfind("load: posix: open for reading ", 0), 0u)
      << reader.done().error;
  EXPECT_NE(reader.done().error.find("gone.bin"), std::string::npos) << reader.done().error;
  EXPECT_FALSE(reader.call({&plans[2], view, 0, "load"}));
  const Execution done = reader.finish();
  EXPECT_EQ(done.bytes, 4096u);
  EXPECT_EQ(done.seconds.size(), 2u) << "a.bin's run, then gone.bin's failed open";
}

// Parts of one plan (a ring's chunks) move through its files kept open, one transfer a part, each
// at its file offsets from the chunk's memory; close_files() makes the next call of the same files
// open them again; drop_files() releases them unsynced and uncounted; per call, a part is refused.
TEST(PlanExecutor, PartsMoveThroughTheFilesKeptOpenUntilClosedOrDropped) {
  std::vector<std::byte> memory = counting_bytes(8192);
  const backends::IoPlan plan = plan_of("f", 0, 6000);
  const std::vector<StagedPart> parts = split_plan(plan, 4096);
  ASSERT_EQ(parts.size(), 2u);
  std::vector<std::string> log;
  memory_test::MemoryBackend backend(log, false);
  PlanExecutor writer(backend, true, {.opening = Opening::kept_open});
  for (const StagedPart& part : parts) {
    const backends::MemoryView chunk{memory.data() + part.offset, part.bytes,
                                     backends::MemoryKind::host};
    EXPECT_TRUE(writer.call({.plan = &plan, .memory = chunk, .who = "r", .part = &part}));
  }
  EXPECT_TRUE(writer.close_files());
  EXPECT_TRUE(writer.call({.plan = &plan, .memory = {memory.data(), 4096}, .part = &parts[0]}));
  writer.drop_files();
  const Execution done = writer.finish();
  EXPECT_EQ(done.error, "");
  EXPECT_EQ(done.bytes, 6000u) << "the dropped transfer is not counted";
  EXPECT_EQ(log, (std::vector<std::string>{"open", "transfer", "transfer", "sync", "close", "open",
                                           "transfer"}));
  EXPECT_EQ(backend.moved["f"], (std::vector<std::string>{"0+4096", "4096+1904", "0+4096"}));
  EXPECT_TRUE(std::equal(memory.begin(), memory.begin() + 6000, backend.files["f"].begin()));

  PlanExecutor once(backend, true, {.on_throw = OnThrow::record});
  EXPECT_FALSE(once.call({.plan = &plan, .who = "r", .part = &parts[0]}));
  EXPECT_EQ(once.done().error,
            "r: the executor moves a part of a plan only through files kept open");
}

}  // namespace
}  // namespace ckpt::harness
