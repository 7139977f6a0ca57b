// The compression transform of a plan: frames packed per file in shard order, the stored buffer
// mirroring each file from a base per file, and the IoPlan that moves them.
#include "harness/plan/stored_plan.hpp"

#include <gtest/gtest.h>

#include "tests/unit/plan/shard_fixture.hpp"

namespace ckpt::harness {
namespace {

// Two files: a.bin with shards of 100 and 50 bytes, b.bin with one of 30.
RankPlan two_files() {
  RankPlan plan;
  plan.rank = 3;
  add_shard(plan, "a.bin", 100, 0);
  add_shard(plan, "a.bin", 50, 100);
  add_shard(plan, "b.bin", 30, 150);
  plan.buffer_bytes = 180;
  plan.payload_bytes = 180;
  plan.io.files.push_back({.path = "/ckpt/a.bin"});
  plan.io.files.push_back({.path = "/ckpt/b.bin"});
  return plan;
}

TEST(StoredPlan, PacksEachFilesFramesFromACacheLineBaseOfItsOwn) {
  const RankPlan stored = stored_plan(two_files(), {120, 70, 90});
  ASSERT_EQ(stored.shards.size(), 3u);
  EXPECT_EQ(stored.shards[0].file_offset, 0u);
  EXPECT_EQ(stored.shards[1].file_offset, 120u);
  EXPECT_EQ(stored.shards[2].file_offset, 0u);
  EXPECT_EQ(stored.shards[0].stored_offset, 0u);
  EXPECT_EQ(stored.shards[1].stored_offset, 120u);
  EXPECT_EQ(stored.shards[2].stored_offset, 192u);  // 190 rounded up to 64
  EXPECT_EQ(stored.buffer_bytes, 282u);
  // The logical fields stay: the manifest and verification use them.
  EXPECT_EQ(stored.shards[1].bytes, 50u);
  EXPECT_EQ(stored.shards[1].memory_offset, 100u);
  EXPECT_EQ(stored.shards[2].stored_bytes, 90u);
}

TEST(StoredPlan, SettlingPacksTheFramesAndKeepsEachFilesBase) {
  RankPlan stored = stored_plan(two_files(), {120, 70, 90});
  settle_stored(stored, {40, 10, 5});
  EXPECT_EQ(stored.shards[0].file_offset, 0u);
  EXPECT_EQ(stored.shards[1].file_offset, 40u);
  EXPECT_EQ(stored.shards[1].stored_offset, 40u);
  EXPECT_EQ(stored.shards[2].file_offset, 0u);
  EXPECT_EQ(stored.shards[2].stored_offset, 192u);
  EXPECT_EQ(stored.shards[2].stored_bytes, 5u);
  EXPECT_EQ(stored.buffer_bytes, 282u);  // the allocation holds the bounds
}

TEST(StoredPlan, IoPlanMovesTheFramesMergedAndSplitAsTheCaseSays) {
  RankPlan stored = stored_plan(two_files(), {120, 70, 90});
  settle_stored(stored, {40, 10, 5});
  Case c;
  build_stored_io(stored, c);
  ASSERT_EQ(stored.io.files.size(), 2u);
  EXPECT_EQ(stored.io.files[0].path, "/ckpt/a.bin");
  EXPECT_EQ(stored.io.files[0].file_size, 50u);
  ASSERT_EQ(stored.io.files[0].extents.size(), 2u);
  EXPECT_EQ(stored.io.files[0].extents[1].file_offset, 40u);
  EXPECT_EQ(stored.io.files[0].extents[1].memory_offset, 40u);
  EXPECT_EQ(stored.io.files[0].extents[1].length, 10u);
  ASSERT_EQ(stored.io.files[1].extents.size(), 1u);
  EXPECT_EQ(stored.io.files[1].extents[0].memory_offset, 192u);
  EXPECT_EQ(stored.io.bytes(), 55u);

  c.coalesce_bytes = 1000;  // the frames of a.bin mirror its file: one request
  c.chunk_bytes = 16;
  build_stored_io(stored, c);
  ASSERT_EQ(stored.io.files[0].extents.size(), 4u);  // 50 bytes in 16-byte requests
  EXPECT_EQ(stored.io.files[0].extents[3].file_offset, 48u);
  EXPECT_EQ(stored.io.files[0].extents[3].length, 2u);
}

}  // namespace
}  // namespace ckpt::harness
