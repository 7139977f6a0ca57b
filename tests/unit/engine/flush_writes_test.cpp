// The engines' flush through a ring of chunks (write_through_ring) held to the exact backend calls
// it makes, file by file.
#include "harness/engine/flush_writes.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/engine/chunk_ring.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/memory/staging.hpp"
#include "tests/unit/memory_test_support.hpp"

namespace ckpt::harness {
namespace {

using backends::FilePlan;
using backends::IoPlan;

constexpr std::uint64_t kChunk = 4096;

// Four modeled ranks: 0 and 1 write one shared file (rank 0 in two chunks), rank 2 two ranges of
// its own file in one chunk, rank 3 nothing into its file. Each rank's bytes start at bases[r].
struct RingRig {
  RingRig()
      : space(make_host_space()), state(space->allocate(5 * kChunk)), ring(*state, 2 * kChunk) {
    for (std::uint64_t i = 0; i < state->size(); ++i)
      state->view().data[i] = static_cast<std::byte>((i * 13) % 251);
    target.what = "checkpoint of iteration 7 (/ckpt)";
    target.plans = {
        IoPlan{.files = {FilePlan{.path = "shared", .extents = {{0, 0, 6000}}}}},
        IoPlan{.files = {FilePlan{.path = "shared", .extents = {{6000, 0, 3000}}}}},
        IoPlan{.files = {FilePlan{.path = "own", .extents = {{0, 0, 100}, {200, 100, 50}}}}},
        IoPlan{.files = {FilePlan{.path = "empty"}}}};
    target.ranks = {0, 1, 2, 3};
    for (const IoPlan& plan : target.plans) target.parts.push_back(split_plan(plan, kChunk));
  }

  // The copy side on its own thread (the flush frees the chunks it waits for), as an engine's.
  FlushWrites flush(memory_test::MemoryBackend& backend) {
    std::thread copy([this] { fill_ring(ring, target.parts, bases); });
    const FlushWrites out = write_through_ring(backend, ring, target);
    copy.join();
    return out;
  }

  std::unique_ptr<MemorySpace> space;
  std::unique_ptr<Buffer> state;
  ChunkRing ring;
  FlushTarget target;
  std::vector<std::uint64_t> bases{0, 2 * kChunk, 3 * kChunk, 4 * kChunk};
};

// Each rank's plan through its own open of its files, even where two ranks share a file (as two
// processes would open it); one transfer a chunk, at its file offsets; a rank with nothing to
// write still creates its file.
TEST(FlushWrites, EachRanksFilesOpenedOnceForItsChunksAndEachChunkWrittenInPlace) {
  RingRig rig;
  ASSERT_EQ(rig.target.parts[0].size(), 2u);
  ASSERT_EQ(rig.target.parts[3].size(), 0u);
  std::vector<std::string> log;
  memory_test::MemoryBackend backend(log, false);
  const FlushWrites out = rig.flush(backend);

  EXPECT_EQ(out.error, "");
  EXPECT_EQ(out.bytes, 6000u + 3000u + 150u);
  EXPECT_EQ(log, (std::vector<std::string>{"open", "transfer", "transfer", "sync", "close",  // 0
                                           "open", "transfer", "sync", "close",              // 1
                                           "open", "transfer", "sync", "close",              // 2
                                           "open", "sync", "close"}));                       // 3
  EXPECT_EQ(backend.opens, (std::map<std::string, int>{{"shared", 2}, {"own", 1}, {"empty", 1}}));
  EXPECT_EQ(backend.moved,
            (std::map<std::string, std::vector<std::string>>{
                {"shared", {"0+4096", "4096+1904", "6000+3000"}}, {"own", {"0+100", "200+50"}}}));
  const std::byte* data = rig.state->view().data;
  EXPECT_EQ(std::memcmp(backend.files["shared"].data(), data, 6000), 0);
  EXPECT_EQ(std::memcmp(backend.files["shared"].data() + 6000, data + 2 * kChunk, 3000), 0);
  EXPECT_EQ(std::memcmp(backend.files["own"].data() + 200, data + 3 * kChunk + 100, 50), 0);
}

// The copy side stopped (the ring closed) before a rank's chunks came: that rank's files are
// released unsynced (a snapshot never whole), the error names the rank and the chunk, and no later
// rank is written.
TEST(FlushWrites, ACopySideThatStopsEndsTheFlushNamingTheRankAndChunk) {
  RingRig rig;
  rig.ring.close();
  std::vector<std::string> log;
  memory_test::MemoryBackend backend(log, false);
  const FlushWrites out = write_through_ring(backend, rig.ring, rig.target);
  EXPECT_EQ(out.error,
            "checkpoint of iteration 7 (/ckpt): rank 0: the snapshot copy stopped before chunk 1 "
            "of 2");
  EXPECT_EQ(out.bytes, 0u);
  EXPECT_EQ(log, std::vector<std::string>{"open"});
}

}  // namespace
}  // namespace ckpt::harness
