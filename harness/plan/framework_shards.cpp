#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

std::int64_t rank_of(const workloads::ParallelSpec& p, const workloads::RankCoord& c) {
  return (c.pp * p.dp + c.dp) * p.tp + c.tp;  // Layout::coord's order: tp, dp, pp
}

bool is_optimizer_state(workloads::StateKind kind) { return kind != workloads::StateKind::weight; }

// A shard of a TP-replicated tensor: with tp > 1 every split tensor is cut along one dim.
bool tp_replicated(const workloads::Shard& s) { return s.extent == s.global_shape; }

// What `rank` holds before any gather: its own shards, plus TP rank 0's copies of replicated
// tensors where the format writes them on every TP rank.
std::vector<workloads::Shard> held_shards(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  std::vector<workloads::Shard> shards = layout.shards(rank);
  const workloads::RankCoord coord = layout.coord(rank);
  if (!replicates_across_tp(c) || layout.parallel().tp == 1 || coord.tp == 0) return shards;
  workloads::RankCoord owner = coord;
  owner.tp = 0;
  for (workloads::Shard& s : layout.shards(rank_of(layout.parallel(), owner))) {
    if (tp_replicated(s)) shards.push_back(std::move(s));
  }
  return shards;
}

bool gathers_distributed_optimizer(const Case& c, const workloads::Layout& layout) {
  return c.directory_layout == DirectoryLayout::megatron && layout.parallel().zero_stage >= 1 &&
         layout.parallel().dp > 1;
}

// Megatron's gathered format: the first DP rank of each (tp, pp, ep) group writes the group's
// shards (ep groups: DP ranks with the same ep coordinate, whose first has expert_dp = 0).
std::vector<workloads::Shard> gathered_shards(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  const workloads::ParallelSpec& p = layout.parallel();
  const workloads::RankCoord coord = layout.coord(rank);
  const bool per_dp = c.megatron_optimizer == MegatronOptimizer::per_dp;
  std::vector<workloads::Shard> out;
  if (coord.expert_dp != 0) {
    if (!per_dp) return out;
    for (workloads::Shard& s : held_shards(layout, c, rank)) {
      if (is_optimizer_state(s.state)) out.push_back(std::move(s));
    }
    return out;
  }
  out = held_shards(layout, c, rank);
  for (std::int64_t dp = coord.dp + p.ep; dp < p.dp; dp += p.ep) {
    workloads::RankCoord member = coord;
    member.dp = dp;
    for (workloads::Shard& s : held_shards(layout, c, rank_of(p, member))) {
      if (!per_dp || !is_optimizer_state(s.state)) out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace

std::string deepspeed_pipeline_refusal(std::int64_t zero_stage, const std::string& zero_key, const std::string& pp_key) {
  return "\"deepspeed\" with " + pp_key + " > 1 cannot use " + zero_key + " = " + std::to_string(zero_stage) +
         ": DeepSpeed's PipelineEngine refuses it (\"ZeRO-2 and ZeRO-3 are incompatible with pipeline "
         "parallelism\", deepspeed/runtime/pipe/engine.py) — set " + zero_key + " = 0 or 1, or " + pp_key + " = 1";
}

bool replicates_across_tp(const Case& c) {
  return c.directory_layout == DirectoryLayout::megatron || c.directory_layout == DirectoryLayout::deepspeed;
}

std::vector<workloads::Shard> written_shards(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  if (gathers_distributed_optimizer(c, layout)) return gathered_shards(layout, c, rank);
  return held_shards(layout, c, rank);
}

}  // namespace ckpt::harness
