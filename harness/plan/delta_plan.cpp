#include "harness/plan/delta_plan.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/common/align.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/selective_plan.hpp"

namespace ckpt::harness {

std::vector<DeltaRun> changed_runs(const PlacedShard& placed, std::int64_t base_step) {
  std::vector<DeltaRun> runs;
  if (!placed.updates.active()) return runs;
  const std::uint64_t block = placed.updates.block_bytes;
  for (const BlockPart& part : shard_block_parts(placed)) {
    if (part.version <= base_step) continue;
    const std::uint64_t first = part.local / block * block;
    const std::uint64_t end = std::min(placed.bytes, align_up(part.local + part.bytes, block));
    if (!runs.empty() && first <= runs.back().offset + runs.back().bytes) {
      runs.back().bytes =
          std::max(end, runs.back().offset + runs.back().bytes) - runs.back().offset;
    } else {
      runs.push_back({first, end - first, 0});
    }
  }
  return runs;
}

RankPlan delta_plan(const RankPlan& logical, std::vector<std::vector<DeltaRun>>& runs,
                    const Case& c, const std::filesystem::path& dir) {
  if (runs.size() != logical.shards.size())
    throw std::logic_error("delta plan: one list of runs per shard is needed");
  RankPlan out = emptied_plan(logical);
  PackedFiles files(dir);
  for (std::size_t i = 0; i < logical.shards.size(); ++i) {
    const PlacedShard& s = logical.shards[i];
    for (DeltaRun& run : runs[i]) {
      run.file_offset = files.add(s.file, s.memory_offset + run.offset, run.bytes);
      out.payload_bytes += run.bytes;
    }
  }
  out.io.files = files.files(c.coalesce_bytes, c.chunk_bytes);
  return out;
}

}  // namespace ckpt::harness
