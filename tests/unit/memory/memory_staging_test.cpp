// Device staging without a device: a copier whose "device" is host memory drives the real
// pipeline (split into chunks, slots reused, streamed to the backend), so the chunking, the
// double buffering and the round trip through posix are tested here; only the CUDA copies
// themselves need a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/staging.hpp"
#include "tests/unit/memory_test_support.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using backends::Extent;
using backends::FilePlan;
using backends::IoPlan;
using memory_test::HostCopier;
using memory_test::MemoryBackend;

// Three files; extents out of memory order across files, gaps in memory ([10003, 12000) and
// [17000, 20000)), a partial word, one extent spanning many chunks. Memory bytes [0, 75003).
IoPlan three_files(const std::filesystem::path& dir) {
  IoPlan plan;
  plan.files.push_back(
      FilePlan{.path = (dir / "a").string(), .extents = {{0, 0, 10000}, {10000, 10000, 3}}});
  plan.files.push_back(
      FilePlan{.path = (dir / "b").string(), .extents = {{8192, 25003, 50000}, {0, 20000, 5003}}});
  plan.files.push_back(FilePlan{.path = (dir / "c").string(), .extents = {{4096, 12000, 5000}}});
  return plan;
}

std::vector<std::byte> patterned(std::uint64_t bytes, std::uint64_t key) {
  std::vector<std::byte> data(bytes);
  fill_pattern(data.data(), bytes, DataPattern::random, key);
  return data;
}

TEST(SplitPlan, EveryExtentByteLandsInExactlyOneChunkAtTheRightPlace) {
  const IoPlan plan = three_files("/x");
  for (const std::uint64_t chunk : {4096u, 8192u, 65536u, 1u << 20}) {
    const std::vector<StagedPart> parts = split_plan(plan, chunk);
    std::vector<int> covered(75003, 0);
    std::uint64_t previous_end = 0;
    for (const StagedPart& sparse : parts) {
      const StagedPart& part = sparse;
      EXPECT_LE(part.bytes, chunk);
      for (std::size_t k = 1; k < sparse.files.size(); ++k)
        EXPECT_LT(sparse.files[k - 1].index, sparse.files[k].index);
      const IoPlan io = part_plan(plan, sparse);
      EXPECT_GE(part.offset, previous_end) << "chunks are in memory order and do not overlap";
      previous_end = part.offset + part.bytes;
      ASSERT_EQ(io.files.size(), plan.files.size());
      for (std::size_t f = 0; f < plan.files.size(); ++f) {
        EXPECT_EQ(io.files[f].path, plan.files[f].path);
        for (const Extent& e : io.files[f].extents) {
          EXPECT_LE(e.memory_offset + e.length, part.bytes);
          // The piece maps file bytes to the same memory bytes as the plan's extent did.
          const std::uint64_t memory = part.offset + e.memory_offset;
          bool found = false;
          for (const Extent& o : plan.files[f].extents) {
            if (memory >= o.memory_offset && memory + e.length <= o.memory_offset + o.length) {
              EXPECT_EQ(e.file_offset - o.file_offset, memory - o.memory_offset);
              found = true;
            }
          }
          EXPECT_TRUE(found);
          for (std::uint64_t b = 0; b < e.length; ++b) ++covered[memory + b];
        }
      }
    }
    for (std::uint64_t b = 0; b < covered.size(); ++b) {
      const bool in_gap = (b >= 10003 && b < 12000) || (b >= 17000 && b < 20000);
      ASSERT_EQ(covered[b], in_gap ? 0 : 1) << "byte " << b << " with chunks of " << chunk;
    }
    if (chunk == 4096) {
      EXPECT_EQ(parts.size(), 19u);
    }
  }
  EXPECT_THROW(split_plan(plan, 0), std::invalid_argument);
}

TEST(SplitPlan, ChunkEndsFallOnDatasetElementBoundaries) {
  IoPlan plan;
  FilePlan f{.path = "/x/a", .extents = {{0, 0, 16001}}};
  f.datasets.push_back(
      {.name = "weight/a", .dtype = "fp8", .element_bytes = 1, .flat_begin = 0, .flat_end = 4001});
  f.datasets.push_back({.name = "weight/b",
                        .dtype = "fp32",
                        .element_bytes = 4,
                        .flat_begin = 100,
                        .flat_end = 3100,
                        .memory_offset = 4001});
  plan.files.push_back(f);
  const std::vector<StagedPart> parts = split_plan(plan, 4096);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts[0].bytes, 4093u) << "4096 falls inside an fp32 element that starts at 4093";
  std::vector<int> elements(3000, 0);
  for (const StagedPart& part : parts) {
    const IoPlan io = part_plan(plan, part);
    for (const backends::DatasetPiece& d : io.files[0].datasets) {
      EXPECT_LE(d.memory_offset + d.bytes(), part.bytes);
      if (d.name != "weight/b") continue;
      EXPECT_EQ(part.offset + d.memory_offset, 4001 + (d.flat_begin - 100) * 4);
      for (std::uint64_t e = d.flat_begin; e < d.flat_end; ++e) ++elements[e - 100];
    }
  }
  for (int count : elements) ASSERT_EQ(count, 1);
}

TEST(Stager, PipelinedWriteOverlapsTheNextCopyWithEachChunksWrite) {
  std::vector<std::string> log;
  std::vector<std::byte> device = patterned(75003, 5);
  MemoryBackend backend(log, false);
  Stager stager(std::make_unique<HostCopier>(device.data(), device.size(), 8192, 2, log), false);
  const StagedOutcome out = stager.write(backend, three_files("/x"), 0);
  ASSERT_TRUE(out.io.ok()) << *out.io.error;
  EXPECT_EQ(out.chunks, 10u);
  EXPECT_DOUBLE_EQ(out.copy_seconds, 0.25 * 10);
  EXPECT_EQ(out.io.bytes, three_files("/x").bytes());
  EXPECT_GE(out.seconds, out.io.phases.total());
  // Two copies are in flight before the first write; each write is followed by the copy of the
  // chunk two further on into the slot it freed.
  ASSERT_GE(log.size(), 8u);
  EXPECT_EQ(log[0], "start 0 0");
  EXPECT_EQ(log[1], "start 1 8192");
  EXPECT_EQ(log[2], "open");
  EXPECT_EQ(log[3], "wait 0");
  EXPECT_EQ(log[4], "transfer");
  EXPECT_EQ(log[5], "start 0 16384");
  EXPECT_EQ(log[6], "wait 1");
  EXPECT_EQ(log[7], "transfer");
  EXPECT_EQ(log[log.size() - 2], "sync");
  EXPECT_EQ(log.back(), "close");
  // What the backend stored is the device's bytes.
  const IoPlan plan = three_files("/x");
  for (const FilePlan& f : plan.files) {
    for (const Extent& e : f.extents) {
      ASSERT_EQ(std::memcmp(backend.files[f.path].data() + e.file_offset,
                            device.data() + e.memory_offset, e.length),
                0);
    }
  }
}

// The whole order of copies and transfers, write then read, through three slots: a write's slot
// is refilled with the chunk three further on once its transfer is done; a read waits for a
// slot's copy to the device only when it needs that slot for the chunk three further on.
TEST(Stager, PipelinedSlotsAreReusedInRingOrder) {
  std::vector<std::string> log;
  std::vector<std::byte> device = patterned(75003, 5);
  MemoryBackend backend(log, false);
  Stager writer(std::make_unique<HostCopier>(device.data(), device.size(), 16384, 3, log), false);
  ASSERT_TRUE(writer.write(backend, three_files("/x"), 0).io.ok());
  std::string order;
  for (const std::string& step : log) order += step + "; ";
  EXPECT_EQ(order,
            "start 0 0; start 1 16384; start 2 32768; open; wait 0; transfer; start 0 49152; "
            "wait 1; transfer; start 1 65536; wait 2; transfer; wait 0; transfer; wait 1; "
            "transfer; sync; close; ");
  log.clear();
  std::vector<std::byte> restored(75003);
  Stager reader(std::make_unique<HostCopier>(restored.data(), restored.size(), 16384, 3, log),
                false);
  ASSERT_TRUE(reader.read(backend, three_files("/x"), 0).io.ok());
  order.clear();
  for (const std::string& step : log) order += step + "; ";
  EXPECT_EQ(order,
            "open; transfer; start 0 0; transfer; start 1 16384; transfer; start 2 32768; wait 0; "
            "transfer; start 0 49152; wait 1; transfer; start 1 65536; wait 0; wait 1; wait 2; "
            "sync; close; ");
}

TEST(Stager, RoundTripThroughPosixWithOneTwoAndThreeSlots) {
  const test_support::TempDir dir;
  const std::unique_ptr<backends::Backend> posix =
      backends::make_backend("posix", backends::IoSettings{});
  for (const int slots : {1, 2, 3}) {
    const IoPlan plan = three_files(dir.path() / std::to_string(slots));
    std::filesystem::create_directories(dir.path() / std::to_string(slots));
    std::vector<std::string> log;
    std::vector<std::byte> device = patterned(75003, 7 + static_cast<std::uint64_t>(slots));
    const std::vector<std::byte> written = device;
    Stager writer(std::make_unique<HostCopier>(device.data(), device.size(), 4096, slots, log),
                  false);
    const StagedOutcome w = writer.write(*posix, plan, 0);
    ASSERT_TRUE(w.io.ok()) << *w.io.error;
    std::vector<std::byte> restored(75003);
    Stager reader(std::make_unique<HostCopier>(restored.data(), restored.size(), 4096, slots, log),
                  false);
    const StagedOutcome r = reader.read(*posix, plan, 0);
    ASSERT_TRUE(r.io.ok()) << *r.io.error;
    EXPECT_EQ(r.chunks, 19u);
    for (const FilePlan& f : plan.files) {
      for (const Extent& e : f.extents) {
        ASSERT_EQ(std::memcmp(restored.data() + e.memory_offset, written.data() + e.memory_offset,
                              e.length),
                  0)
            << f.path << " with " << slots << " slots";
      }
    }
  }
}

TEST(Stager, PlansAtAnOffsetInTheBufferUseTheirOwnBytes) {
  std::vector<std::string> log;
  std::vector<std::byte> device = patterned(100000 + 75003, 9);
  MemoryBackend backend(log, false);
  Stager stager(std::make_unique<HostCopier>(device.data(), device.size(), 8192, 2, log), false);
  ASSERT_TRUE(stager.write(backend, three_files("/x"), 100000).io.ok());
  const IoPlan plan = three_files("/x");
  const Extent& e = plan.files[1].extents[0];
  EXPECT_EQ(std::memcmp(backend.files["/x/b"].data() + e.file_offset,
                        device.data() + 100000 + e.memory_offset, e.length),
            0);
}

TEST(Stager, CollectiveBackendsGetTheWholeBufferStagedFirst) {
  std::vector<std::string> log;
  std::vector<std::byte> device = patterned(75003, 3);
  MemoryBackend backend(log, true);
  EXPECT_THROW(backend.begin(three_files("/x"), true), std::invalid_argument);
  Stager stager(std::make_unique<HostCopier>(device.data(), device.size(), 75003, 1, log), true);
  const StagedOutcome w = stager.write(backend, three_files("/x"), 0);
  ASSERT_TRUE(w.io.ok()) << *w.io.error;
  EXPECT_EQ(log,
            (std::vector<std::string>{"start 0 0", "wait 0", "open", "transfer", "sync", "close"}));
  std::vector<std::byte> restored(75003);
  log.clear();
  Stager reader(std::make_unique<HostCopier>(restored.data(), restored.size(), 75003, 1, log),
                true);
  ASSERT_TRUE(reader.read(backend, three_files("/x"), 0).io.ok());
  EXPECT_EQ(log,
            (std::vector<std::string>{"open", "transfer", "sync", "close", "start 0 0", "wait 0"}));
  EXPECT_EQ(std::memcmp(restored.data() + 20000, device.data() + 20000, 55003), 0);
}

TEST(Stager, ACopyFailureBecomesTheOutcomesErrorAndNoSlotIsLeftPending) {
  std::vector<std::string> log;
  std::vector<std::byte> device = patterned(75003, 3);
  MemoryBackend backend(log, false);
  auto copier = std::make_unique<HostCopier>(device.data(), device.size(), 8192, 2, log);
  copier->fail_at = 4;
  Stager stager(std::move(copier), false);
  const StagedOutcome out = stager.write(backend, three_files("/x"), 0);
  ASSERT_FALSE(out.io.ok());
  EXPECT_NE(out.io.error->find("staging device -> host: simulated copy failure"), std::string::npos)
      << *out.io.error;
  EXPECT_EQ(log.back(), "close") << "the files are closed after the failure";
}

TEST(BackendStream, PartsMustListThePlansFilesInOrder) {
  std::vector<std::string> log;
  MemoryBackend backend(log, false);
  const IoPlan plan = three_files("/x");
  auto stream = backend.begin(plan, true);
  IoPlan reordered = plan;
  std::swap(reordered.files[0], reordered.files[1]);
  std::vector<std::byte> memory(75003);
  EXPECT_THROW(
      stream->transfer(reordered, {memory.data(), memory.size(), backends::MemoryKind::host}),
      std::invalid_argument);
  IoPlan too_big = plan;
  EXPECT_THROW(stream->transfer(too_big, {memory.data(), 100, backends::MemoryKind::host}),
               std::invalid_argument);
  stream->transfer(plan, {memory.data(), memory.size(), backends::MemoryKind::host});
  const backends::IoOutcome out = stream->finish();
  EXPECT_TRUE(out.ok());
  EXPECT_EQ(out.bytes, plan.bytes());
}

}  // namespace
}  // namespace ckpt::harness
