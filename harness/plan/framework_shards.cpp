#include "harness/plan/framework_shards.hpp"

#include <algorithm>
#include <utility>

#include "harness/plan/deepspeed_zero3.hpp"

namespace ckpt::harness {
namespace {

std::int64_t rank_of(const workloads::ParallelSpec& p, const workloads::RankCoord& c) {
  return (c.pp * p.dp + c.dp) * p.tp + c.tp;  // Layout::coord's order: tp, dp, pp
}

bool is_optimizer_state(workloads::StateKind kind) {
  return kind != workloads::StateKind::weight;
}

// What `rank` holds before any gather: its own shards, plus TP rank 0's copies of replicated
// tensors where the format writes them on every TP rank.
std::vector<workloads::Shard> held_shards(const workloads::Layout& layout, const Case& c,
                                          std::int64_t rank) {
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

// Megatron's gathered format: the first DP rank of each (tp, pp, ep) group writes the group's
// shards (ep groups: DP ranks with the same ep coordinate, whose first has expert_dp = 0).
std::vector<workloads::Shard> gathered_shards(const workloads::Layout& layout, const Case& c,
                                              std::int64_t rank,
                                              std::vector<std::int64_t>* holders) {
  const workloads::ParallelSpec& p = layout.parallel();
  const workloads::RankCoord coord = layout.coord(rank);
  const bool per_dp = c.megatron_optimizer == MegatronOptimizer::per_dp;
  std::vector<workloads::Shard> out;
  if (coord.expert_dp != 0) {
    if (!per_dp) return out;
    for (workloads::Shard& s : held_shards(layout, c, rank)) {
      if (is_optimizer_state(s.state)) out.push_back(std::move(s));
    }
    if (holders != nullptr) holders->assign(out.size(), rank);
    return out;
  }
  out = held_shards(layout, c, rank);
  if (holders != nullptr) holders->assign(out.size(), rank);
  for (std::int64_t dp = coord.dp + p.ep; dp < p.dp; dp += p.ep) {
    workloads::RankCoord member = coord;
    member.dp = dp;
    const std::int64_t member_rank = rank_of(p, member);
    for (workloads::Shard& s : held_shards(layout, c, member_rank)) {
      if (per_dp && is_optimizer_state(s.state)) continue;
      out.push_back(std::move(s));
      if (holders != nullptr) holders->push_back(member_rank);
    }
  }
  return out;
}

// Whether DP ranks hold copies of this state (so that the layout gives it to DP rank 0 alone).
bool dp_replicated(const workloads::ParallelSpec& p, workloads::StateKind kind) {
  return p.zero_stage == 0 || (kind == workloads::StateKind::weight && p.zero_stage < 3);
}

// Megatron's fully parallel save (dist_checkpointing/exchange_utils.py,
// distribute_shards_to_ranks): shards held by one rank stay with it; the DP-replicated ones,
// largest first, go each to the least loaded rank of the DP group (lowest rank on ties).
std::vector<workloads::Shard> spread_replicas(const workloads::Layout& layout, std::int64_t rank) {
  const workloads::ParallelSpec& p = layout.parallel();
  const workloads::RankCoord coord = layout.coord(rank);
  std::vector<workloads::Shard> own = layout.shards(rank);
  if (p.dp == 1) return own;
  workloads::RankCoord first = coord;
  first.dp = coord.ep;  // the group: DP ranks with this ep coordinate, from expert_dp 0
  std::vector<workloads::Shard> replicas;
  std::vector<std::pair<std::int64_t, std::int64_t>> load;  // (bytes, dp) per member
  for (std::int64_t dp = first.dp; dp < p.dp; dp += p.ep) {
    workloads::RankCoord member = coord;
    member.dp = dp;
    load.emplace_back(layout.totals(rank_of(p, member)).bytes, dp);
  }
  for (workloads::Shard& s : layout.shards(rank_of(p, first))) {
    if (!dp_replicated(p, s.state)) continue;
    load.front().first -= s.bytes;
    replicas.push_back(std::move(s));
  }
  std::stable_sort(
      replicas.begin(), replicas.end(),
      [](const workloads::Shard& a, const workloads::Shard& b) { return a.bytes > b.bytes; });
  std::vector<workloads::Shard> out;
  for (workloads::Shard& s : own) {
    if (coord.expert_dp != 0 || !dp_replicated(p, s.state)) out.push_back(std::move(s));
  }
  for (workloads::Shard& s : replicas) {
    auto least = std::min_element(load.begin(), load.end());
    least->first += s.bytes;
    if (least->second == coord.dp) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

bool tp_replicated(const workloads::Shard& s) {
  return s.extent == s.global_shape;
}

bool replicates_across_tp(const Case& c) {
  return c.directory_layout == DirectoryLayout::megatron ||
         c.directory_layout == DirectoryLayout::deepspeed;
}

bool gathers_distributed_optimizer(const Case& c, const workloads::Layout& layout) {
  return c.directory_layout == DirectoryLayout::megatron && layout.parallel().zero_stage >= 1 &&
         layout.parallel().dp > 1;
}

std::int64_t gather_root(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  if (!gathers_distributed_optimizer(c, layout)) return rank;
  workloads::RankCoord root = layout.coord(rank);
  if (root.expert_dp == 0) return rank;
  root.dp = root.ep;  // the group's first DP rank (expert_dp 0)
  return rank_of(layout.parallel(), root);
}

std::vector<workloads::Shard> written_shards(const workloads::Layout& layout, const Case& c,
                                             std::int64_t rank,
                                             std::vector<std::int64_t>* holders) {
  if (gathers_distributed_optimizer(c, layout)) return gathered_shards(layout, c, rank, holders);
  std::vector<workloads::Shard> out = c.directory_layout == DirectoryLayout::megatron_dist
                                          ? spread_replicas(layout, rank)
                                          : held_shards(layout, c, rank);
  // DeepSpeed's ZeRO-3 saves the weights only as the fp32 partition in the optimizer file.
  if (deepspeed_zero3_files(c, layout))
    std::erase_if(out, [](const workloads::Shard& s) { return !is_optimizer_state(s.state); });
  if (holders != nullptr) holders->assign(out.size(), rank);
  return out;
}

std::vector<workloads::Shard> model_parallel_weights(const workloads::Layout& layout,
                                                     std::int64_t rank) {
  const workloads::ParallelSpec& p = layout.parallel();
  workloads::ParallelSpec single = p;
  single.dp = 1;
  single.ep = 1;
  single.zero_stage = 0;
  workloads::StateSpec weights = layout.state();
  weights.scope = workloads::StateScope::weights;
  weights.naming = layout.state().effective_naming();
  const workloads::Layout group(layout.model(), single, weights);
  const workloads::RankCoord c = layout.coord(rank);
  std::vector<workloads::Shard> own = group.shards(c.pp * p.tp + c.tp);
  if (c.tp == 0) return own;
  std::vector<workloads::Shard> tensors;
  auto next_own = own.begin();
  for (workloads::Shard& first : group.shards(c.pp * p.tp)) {
    if (first.extent == first.global_shape) {
      tensors.push_back(std::move(first));
    } else if (next_own != own.end()) {
      tensors.push_back(std::move(*next_own++));
    }
  }
  return tensors;
}

}  // namespace ckpt::harness
