#pragma once

// Plans built shard by shard for the plan transforms' tests.

#include <cstdint>

#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// Appends to `plan` a shard of rank plan.rank: `bytes` of `file` at `file_offset`, held at
// `memory_offset` of the rank's buffer.
inline void add_shard(RankPlan& plan, const char* file, std::uint64_t bytes,
                      std::uint64_t memory_offset, std::uint64_t file_offset = 0) {
  PlacedShard& s = plan.shards.emplace_back();
  s.file = file;
  s.bytes = bytes;
  s.memory_offset = memory_offset;
  s.file_offset = file_offset;
  s.rank = plan.rank;
}

}  // namespace ckpt::harness
