#pragma once

// The save planner's selective transform (strategy.selective_every): a checkpoint that holds a
// rotating subset of the layers. Its plan keeps the logical plan's buffer places and writes only
// the pieces it holds, packed back to back in shard order within each file.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// The layer a tensor belongs to: the first all-digit component of its dotted name
// ("model.layers.7.mlp.up_proj.weight": 7); nullopt for a tensor outside the layers.
std::optional<std::int64_t> tensor_layer(std::string_view name);

// The routed expert a tensor belongs to: the all-digit component after one ending in "experts"
// ("model.layers.3.mlp.experts.5.up_proj.weight": 5); nullopt for any other tensor (shared
// experts, routers, experts fused into one tensor).
std::optional<std::int64_t> tensor_expert(std::string_view name);

// Whether checkpoint `turn` of a selective chain holds `shard` in its rotation. selective_every:
// its layer's index modulo spec.every is the turn's (a tensor outside the layers goes with layer
// 0). partial_experts: a routed expert e is held when (e - turn * k) modulo E is below k, every
// other tensor always.
bool selective_due(const SelectiveSpec& spec, const workloads::Shard& shard, std::int64_t turn);

// The start of a plan that stores part of `logical`'s state in files of its own (selective and
// delta checkpoints): `logical` without its shards and payload (its rank and buffer places kept).
RankPlan emptied_plan(const RankPlan& logical);

// `logical` (written to `dir`) with only the shards keep[i] says: file offsets packed per file in
// shard order, memory offsets unchanged, files without a kept shard left out; its IoPlan moves
// those shards (merged and split as strategy.coalesce_bytes and strategy.chunk_bytes say). Of a
// stored plan (strategy.compression), it moves the kept shards' frames (stored_bytes from
// stored_offset of the stored buffer).
// Throws std::logic_error when keep does not have one flag per shard.
RankPlan selective_plan(const RankPlan& logical, const std::vector<bool>& keep, const Case& c,
                        const std::filesystem::path& dir);

}  // namespace ckpt::harness
