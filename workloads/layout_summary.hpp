#pragma once

#include <cstdint>
#include <vector>

#include "workloads/layout.hpp"

namespace ckpt::workloads {

struct Distribution {
  std::int64_t min = 0;
  std::int64_t median = 0;  // lower median: element (n - 1) / 2 of the sorted values
  std::int64_t max = 0;
};

// Shards whose size lies in [lower, 2 × lower) bytes; lower = 0 holds empty shards, 1 holds 1 byte.
struct SizeBucket {
  std::int64_t lower = 0;
  std::int64_t shards = 0;
  std::int64_t bytes = 0;
};

struct WorldSummary {
  std::int64_t parameters = 0;
  std::int64_t world_size = 0;
  std::int64_t checkpoint_bytes = 0;
  std::int64_t shards = 0;         // shards written by all ranks together
  std::int64_t writing_ranks = 0;  // ranks that write at least one byte
  Distribution rank_bytes;
  Distribution rank_shards;
  std::vector<SizeBucket> histogram;  // only non-empty buckets, ascending
};

// Summarises every rank without materialising shards: ranks that differ only in their
// tensor-parallel index (other than TP rank 0, which also writes the replicated tensors) are
// identical, so one representative per (first-or-other TP rank, stage, DP rank) is visited.
WorldSummary summarize(const Layout& layout);

}  // namespace ckpt::workloads
