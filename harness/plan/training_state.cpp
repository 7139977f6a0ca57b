#include "harness/plan/training_state.hpp"

#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness {

std::uint64_t training_key(std::uint64_t data_key, std::int64_t iteration) {
  if (iteration < 0) return data_key;
  // The low bits name a trained tensor's content (pattern::content_code): they stay.
  return pattern::with_content(
      pattern::splitmix64(data_key ^ pattern::splitmix64(0x7261696e696e67ULL +
                                                         static_cast<std::uint64_t>(iteration))),
      data_key);
}

void shard_at_iteration(PlacedShard& shard, std::int64_t iteration) {
  if (iteration < 0) return;
  BlockUpdates& u = shard.updates;
  if (u.block_bytes > 0 && u.changed_per_million > 0) {
    u.step = iteration + 1;
  } else {
    shard.data_key = training_key(shard.data_key, iteration);
  }
}

std::vector<RankPlan> plans_at_iteration(std::vector<RankPlan> plans, std::int64_t iteration) {
  for (RankPlan& plan : plans) {
    for (PlacedShard& shard : plan.shards) shard_at_iteration(shard, iteration);
  }
  return plans;
}

}  // namespace ckpt::harness
