#pragma once

// The save planner's delta transform (strategy.delta_every): a checkpoint that stores, of each
// piece, only the blocks the emulated update changed since the run's last full checkpoint (its
// base). Its plan keeps the logical plan's buffer places and writes those blocks packed back to
// back in shard order within each file; the manifest lists every piece with its base and the runs
// this checkpoint holds.

#include <cstdint>
#include <filesystem>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// Bytes [offset, offset + bytes) of a piece, stored at file_offset of a delta checkpoint's file.
struct DeltaRun {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t file_offset = 0;
  // strategy.compression: the bytes of the run's frames at file_offset (`bytes` is what they
  // decode to); 0: stored raw.
  std::uint64_t stored_bytes = 0;

  std::uint64_t file_bytes() const { return stored_bytes > 0 ? stored_bytes : bytes; }

  bool operator==(const DeltaRun&) const = default;
};

// The runs of `placed` (its bytes at placed.updates.step) a delta against a base written at step
// `base_step` stores: the blocks of the piece's own bytes (updates.block_bytes each, from its
// first byte; the last one shorter) that hold a byte of a tensor block an update after base_step
// changed, adjacent ones merged, in order (file_offset 0). None when its updates are inactive.
std::vector<DeltaRun> changed_runs(const PlacedShard& placed, std::int64_t base_step);

// `logical` (written to `dir`) storing only runs[i] of shard i: their file offsets set here, packed
// back to back per file in shard order; files without a run left out. It has no shards (the
// manifest lists them with their base); its IoPlan moves the runs from the shards' places in the
// buffer, merged and split as strategy.coalesce_bytes and strategy.chunk_bytes say. Throws
// std::logic_error when runs does not have one list per shard.
RankPlan delta_plan(const RankPlan& logical, std::vector<std::vector<DeltaRun>>& runs,
                    const Case& c, const std::filesystem::path& dir);

}  // namespace ckpt::harness
