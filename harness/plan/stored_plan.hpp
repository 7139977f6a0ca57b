#pragma once

// The save planner's compression transform (strategy.compression). A compressed checkpoint stores
// each shard as frames of data-dependent size, so its file offsets are decided after compression.
// A stored plan keeps the logical plan's shards (their `bytes` and `memory_offset`, which the
// manifest, the checksums and verification use) and adds where each shard's frames lie: back to
// back in shard order within each file (no padding), mirrored in the stored plan's own buffer from
// a base per file. Its IoPlan moves those frames.

#include <cstdint>
#include <string>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// `logical` with room for shard i's frames: sizes[i] bytes (the most they can take before
// compression, what the manifest records after), packed per file; buffer_bytes covers them. Its
// IoPlan moves those sizes (build_stored_io); the logical plan's files, in order, keep their
// paths.
RankPlan stored_plan(const RankPlan& logical, const std::vector<std::uint64_t>& sizes);

// The stored plan's files after compression: each shard's frames took sizes[i] bytes; file offsets
// and buffer offsets packed again in shard order, every shard moving only towards the start of its
// file's region (the caller moves the bytes, in shard order, from the old stored_offset to the
// new).
void settle_stored(RankPlan& stored, const std::vector<std::uint64_t>& sizes);

// The stored plan's IoPlan from its shards: per file, one extent per shard's frames, merged and
// split as strategy.coalesce_bytes and strategy.chunk_bytes say.
void build_stored_io(RankPlan& stored, const Case& c);

}  // namespace ckpt::harness
