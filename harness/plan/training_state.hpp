#pragma once

// The emulated training state: each shard's bytes at training iteration t are the data pattern
// seeded by training_key(data_key, t), so every iteration's state differs from the last, and a
// snapshot that mixes two iterations fails verification against the iteration its manifest names.
// Under the delta update model (strategy.delta_every: a shard with BlockUpdates) the iteration's
// update is the blocks' instead: iteration t's state is the blocks after update step t + 1, the key
// unchanged, so that a delta checkpoint holds only the blocks changed since its base.

#include <cstdint>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// The seed of a shard's bytes at training iteration `iteration`; iteration -1 (the state before
// any update, as fill_plans writes it) keeps `data_key`. The key's content bits (the trained
// pattern's state and format) are kept at every iteration.
std::uint64_t training_key(std::uint64_t data_key, std::int64_t iteration);

// `shard` as it is at training iteration `iteration`: its data_key replaced by its training_key, or
// under the delta update model its updates' step set to iteration + 1; unchanged at iteration -1.
void shard_at_iteration(PlacedShard& shard, std::int64_t iteration);

// `plans` with every shard as shard_at_iteration makes it: fill_plans of these writes that
// iteration's state, verify_plans checks it.
std::vector<RankPlan> plans_at_iteration(std::vector<RankPlan> plans, std::int64_t iteration);

}  // namespace ckpt::harness
