#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "workloads/layout.hpp"
#include "workloads/layout_summary.hpp"

namespace ckpt::harness {

// Above this many ranks the JSON report carries a rank_summary instead of every rank.
inline constexpr std::int64_t kMaxListedRanks = 4096;

// Human report: model, parallelism, state, checkpoint size, per-rank distribution and a
// histogram of shard sizes; with `rank`, also that rank's shards one per line.
void print_layout_text(std::ostream& out, const workloads::Layout& layout,
                       const workloads::WorldSummary& summary, std::optional<std::int64_t> rank);

// One JSON object: parameters, world_size, checkpoint_bytes, ranks (every rank up to
// kMaxListedRanks, or only `rank` with its shards), rank_summary, histogram, and the inputs.
nlohmann::json layout_json(const workloads::Layout& layout, const workloads::WorldSummary& summary,
                           std::optional<std::int64_t> rank);

}  // namespace ckpt::harness
