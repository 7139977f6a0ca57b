// The delta transform of a plan: the update model (which blocks of a tensor each step changes,
// and the seed of a block's bytes after it), a shard's runs changed since a base, and the plan
// that writes only those runs (packed per file, buffer places kept).
#include "harness/plan/delta_plan.hpp"

#include <gtest/gtest.h>

#include "tests/unit/plan/shard_fixture.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kDeltaBlock = 4096;
constexpr std::uint64_t kTensorKey = 0x1234'5678'9abc'def0ULL;

TEST(DeltaPlan, ABlocksVersionIsTheLastStepWhoseUpdateChangedIt) {
  const BlockUpdates u{.block_bytes = kDeltaBlock, .changed_per_million = 300'000, .step = 7};
  int never = 0;
  for (std::uint64_t block = 0; block < 200; ++block) {
    std::int64_t expected = 0;
    for (std::int64_t s = 1; s <= 7; ++s) {
      if (block_changed(kTensorKey, block, s, 300'000)) expected = s;
    }
    EXPECT_EQ(last_changed(u, kTensorKey, block), expected) << block;
    never += expected == 0 ? 1 : 0;
  }
  EXPECT_GT(never, 0);  // 0.7^7 of the blocks: some are never changed
  EXPECT_LT(never, 200);
  EXPECT_EQ(
      last_changed({.block_bytes = kDeltaBlock, .changed_per_million = 300'000}, kTensorKey, 3), 0);
  EXPECT_EQ(last_changed({kDeltaBlock, 1'000'000, 5}, kTensorKey, 3),
            5);  // every block at every step
}

TEST(DeltaPlan, OneUpdateChangesTheChosenShareOfBlocks) {
  int changed = 0;
  for (std::uint64_t block = 0; block < 20'000; ++block)
    changed += block_changed(kTensorKey, block, 1, 50'000) ? 1 : 0;
  EXPECT_GE(changed, 900);  // 5 % of 20,000 is 1,000; the band is over 3 standard deviations
  EXPECT_LE(changed, 1100);
}

TEST(DeltaPlan, ABlocksSeedKeepsTheContentBitsAndDiffersPerVersion) {
  EXPECT_EQ(block_key(kTensorKey, 3, 0), kTensorKey);
  EXPECT_NE(block_key(kTensorKey, 3, 1), block_key(kTensorKey, 3, 2));
  EXPECT_NE(block_key(kTensorKey, 3, 1), block_key(kTensorKey, 4, 1));
  EXPECT_EQ(block_key(kTensorKey, 3, 1) & 0xF, kTensorKey & 0xF);
}

TEST(DeltaPlan, ARunIsSplitWhereItsTensorsBlocksEnd) {
  std::vector<BlockPart> parts;
  split_into_blocks({kDeltaBlock, 1'000'000, 3}, kTensorKey, 100, 4000, 5000, parts);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].local, 100u);
  EXPECT_EQ(parts[0].bytes, 96u);
  EXPECT_EQ(parts[0].global, 4000u);
  EXPECT_EQ(parts[1].local, 196u);
  EXPECT_EQ(parts[1].bytes, 4096u);
  EXPECT_EQ(parts[1].global, 4096u);
  EXPECT_EQ(parts[2].bytes, 808u);
  EXPECT_EQ(parts[2].global, 8192u);
  for (const BlockPart& p : parts) EXPECT_EQ(p.version, 3);
  parts.clear();
  split_into_blocks({}, kTensorKey, 100, 4000, 5000,
                    parts);  // no updates: one part, the base bytes
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].bytes, 5000u);
  EXPECT_EQ(parts[0].version, 0);
}

// A shard without a place in a tensor: its own bytes are the tensor's from 0.
PlacedShard unplaced_shard(std::uint64_t bytes, BlockUpdates updates) {
  PlacedShard s;
  s.file = "a.bin";
  s.bytes = bytes;
  s.data_key = kTensorKey;
  s.updates = updates;
  return s;
}

TEST(DeltaPlan, ChangedRunsAreTheBlocksHoldingAByteChangedSinceTheBase) {
  const std::uint64_t bytes = 9 * kDeltaBlock + 100;
  const BlockUpdates u{kDeltaBlock, 500'000, 4};
  const PlacedShard s = unplaced_shard(bytes, u);
  std::vector<DeltaRun> expected;
  for (std::uint64_t b = 0; b < 10; ++b) {
    if (last_changed(u, kTensorKey, b) <= 2) continue;
    const std::uint64_t end = std::min(bytes, (b + 1) * kDeltaBlock);
    if (!expected.empty() && expected.back().offset + expected.back().bytes == b * kDeltaBlock)
      expected.back().bytes = end - expected.back().offset;
    else
      expected.push_back({b * kDeltaBlock, end - b * kDeltaBlock, 0});
  }
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(changed_runs(s, 2), expected);
  EXPECT_TRUE(changed_runs(s, 4).empty());  // nothing changed after step 4
  EXPECT_EQ(changed_runs(unplaced_shard(bytes, {kDeltaBlock, 1'000'000, 4}), 3),
            (std::vector<DeltaRun>{{0, bytes, 0}}));
  EXPECT_TRUE(changed_runs(unplaced_shard(bytes, {}), 0).empty());
}

TEST(DeltaPlan, OnlyTheBlocksChangedAfterAStepAreRewritten) {
  RankPlan plan;
  plan.shards.push_back(unplaced_shard(3 * kDeltaBlock, {kDeltaBlock, 1'000'000, 2}));
  const std::vector<PatternRange> all = shard_pattern_ranges({plan}, {64}, nullptr, 1);
  ASSERT_EQ(all.size(), 3u);
  for (std::uint64_t b = 0; b < 3; ++b) {
    EXPECT_EQ(all[b].offset, 64 + b * kDeltaBlock);
    EXPECT_EQ(all[b].global_offset, b * kDeltaBlock);
    EXPECT_EQ(all[b].key, block_key(kTensorKey, b, 2));
  }
  EXPECT_TRUE(shard_pattern_ranges({plan}, {64}, nullptr, 2).empty());
}

TEST(DeltaPlan, TheDeltaPlanPacksEachFilesRunsAtTheirBufferPlaces) {
  RankPlan plan;
  plan.rank = 1;
  add_shard(plan, "a.bin", 3 * kDeltaBlock, 0);
  add_shard(plan, "a.bin", 2 * kDeltaBlock, 3 * kDeltaBlock, 3 * kDeltaBlock);
  add_shard(plan, "b.bin", kDeltaBlock, 5 * kDeltaBlock);
  plan.buffer_bytes = 6 * kDeltaBlock;
  std::vector<std::vector<DeltaRun>> runs{{{0, kDeltaBlock, 0}, {2 * kDeltaBlock, kDeltaBlock, 0}},
                                          {{kDeltaBlock, kDeltaBlock, 0}},
                                          {}};
  const Case c;
  const RankPlan out = delta_plan(plan, runs, c, "/ckpt/step_3");
  EXPECT_TRUE(out.shards.empty());
  EXPECT_EQ(out.payload_bytes, 3 * kDeltaBlock);
  EXPECT_EQ(out.buffer_bytes, 6 * kDeltaBlock);  // the logical plan's buffer
  EXPECT_EQ(runs[0][1].file_offset, kDeltaBlock);
  EXPECT_EQ(runs[1][0].file_offset, 2 * kDeltaBlock);
  ASSERT_EQ(out.io.files.size(), 1u);  // b.bin has no run
  EXPECT_EQ(out.io.files[0].path, "/ckpt/step_3/a.bin");
  EXPECT_EQ(out.io.files[0].file_size, 3 * kDeltaBlock);
  ASSERT_EQ(out.io.files[0].extents.size(), 3u);
  EXPECT_EQ(out.io.files[0].extents[1].memory_offset, 2 * kDeltaBlock);
  EXPECT_EQ(out.io.files[0].extents[2].file_offset, 2 * kDeltaBlock);
  EXPECT_EQ(out.io.files[0].extents[2].memory_offset, 4 * kDeltaBlock);
  std::vector<std::vector<DeltaRun>> one(1);
  EXPECT_THROW(delta_plan(plan, one, c, "/ckpt"), std::logic_error);
}

}  // namespace
}  // namespace ckpt::harness
