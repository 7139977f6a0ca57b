#include "harness/loadplan/replica_plans.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "harness/common/align.hpp"
#include "harness/loadplan/least_loaded.hpp"

namespace ckpt::harness {
namespace {

// The pieces DP rank 0 of one (TP, PP) position wrote of the kinds replicated across DP, in
// manifest order, and where its buffer held the first of them.
struct Replicated {
  std::vector<const ManifestTensor*> pieces;
  std::uint64_t begin = 0;
  std::vector<std::int64_t> members;  // the selected ranks holding them, ascending
};

// A selected rank: what it wrote, its DP rank 0 and where the replicated pieces go in its buffer.
struct HeldRank {
  std::vector<const ManifestTensor*> own;  // what it wrote (DP rank 0: the replicated pieces too)
  std::int64_t dp0 = 0;
  std::uint64_t base = 0;  // past its own pieces (DP rank 0: unused, its pieces are in place)
  int process = 0;

  // Where replicated piece `t` of `r` lies in rank `rank`'s buffer.
  std::uint64_t place(const ManifestTensor& t, const Replicated& r, std::int64_t rank) const {
    return rank == dp0 ? t.memory_offset : base + (t.memory_offset - r.begin);
  }
};

// The manifest indexed by the selected ranks and their DP ranks 0.
struct ReplicaIndex {
  std::map<std::int64_t, HeldRank> ranks;     // every selected rank
  std::map<std::int64_t, Replicated> groups;  // by DP rank 0
  std::set<const ManifestTensor*> replicated;
};

void check_plannable(const workloads::Layout& layout) {
  const workloads::ParallelSpec& p = layout.parallel();
  if (layout.state().sizing == workloads::Sizing::dlio)
    throw ReshardError(
        "restore.replicas: state.sizing = \"dlio\" has no tensors to share; use state.sizing = "
        "\"exact\" or restore.replicas = \"written\"");
  if (p.ep > 1)
    throw ReshardError(fmt::format(
        "restore.replicas with parallel.ep = {}: expert tensors are replicated only within an "
        "expert group, which it does not plan; use parallel.ep = 1 or restore.replicas = "
        "\"written\"",
        p.ep));
}

ReplicaIndex index_manifest(const Manifest& manifest, const workloads::Layout& layout,
                            const std::vector<std::int64_t>& selected,
                            const std::vector<int>& process_of, std::uint64_t align) {
  ReplicaIndex x;
  for (std::size_t i = 0; i < selected.size(); ++i) {
    HeldRank& h = x.ranks[selected[i]];
    h.dp0 = selected[i] - layout.parallel().tp * layout.coord(selected[i]).dp;
    h.process = process_of[i];
    x.groups[h.dp0].members.push_back(selected[i]);
  }
  for (const ManifestTensor& t : manifest.tensors) {
    if (const auto it = x.ranks.find(t.rank); it != x.ranks.end()) it->second.own.push_back(&t);
    const auto g = x.groups.find(t.rank);
    if (g != x.groups.end() && t.holder < 0 && layout.replicated_across_dp(t.shard.state)) {
      g->second.pieces.push_back(&t);
      x.replicated.insert(&t);
    }
  }
  for (auto& group : x.groups) {
    Replicated& g = group.second;
    g.begin = g.pieces.empty() ? 0 : g.pieces.front()->memory_offset;
    for (const ManifestTensor* t : g.pieces) g.begin = std::min(g.begin, t->memory_offset);
  }
  for (auto& rank : x.ranks) {
    HeldRank& h = rank.second;
    std::uint64_t end = 0;
    for (const ManifestTensor* t : h.own) end = std::max(end, t->memory_offset + t->bytes);
    h.base = align_up(end, align);
  }
  return x;
}

using Entries = std::vector<std::vector<ManifestTensor>>;  // per plan: copies placed for it

// The cooperative restore's sharing of every group's replicated pieces, in one order on every
// process: this process's shares, and the pieces it reads added to `fetched`.
std::vector<ReplicaShare> share_pieces(const ReplicaIndex& x,
                                       const std::map<std::int64_t, std::size_t>& mine, int process,
                                       Entries& fetched) {
  std::vector<ReplicaShare> shares;
  LeastLoaded readers;
  for (const auto& group : x.groups) {
    const Replicated& g = group.second;
    std::vector<int> holders;  // the members' processes, ascending
    for (const std::int64_t r : g.members) holders.push_back(x.ranks.at(r).process);
    std::sort(holders.begin(), holders.end());
    holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
    for (const ManifestTensor* t : g.pieces) {
      ReplicaShare share{.reader = readers.pick(holders, t->bytes), .bytes = t->bytes};
      for (const int q : holders) {
        if (q != share.reader) share.receivers.push_back(q);
      }
      for (const std::int64_t r : g.members) {
        const auto at = mine.find(r);
        if (at == mine.end()) continue;
        const std::uint64_t offset = x.ranks.at(r).place(*t, g, r);
        if (share.places.empty() && share.reader == process) {
          fetched[at->second].push_back(*t);
          fetched[at->second].back().memory_offset = offset;
        }
        share.places.emplace_back(at->second, offset);
      }
      if (!share.places.empty() && (!share.receivers.empty() || share.places.size() > 1))
        shares.push_back(std::move(share));
    }
  }
  return shares;
}

// `entries` in the order of their places in the rank's buffer.
std::vector<const ManifestTensor*> pointers(const std::vector<ManifestTensor>& entries) {
  std::vector<const ManifestTensor*> out;
  for (const ManifestTensor& t : entries) out.push_back(&t);
  std::stable_sort(out.begin(), out.end(), [](const ManifestTensor* a, const ManifestTensor* b) {
    return a->memory_offset < b->memory_offset;
  });
  return out;
}

}  // namespace

ReplicaPlans replica_plans(const Manifest& manifest, const ReshardSpec& spec,
                           const workloads::Layout& layout,
                           const std::vector<std::int64_t>& selected,
                           const std::vector<int>& process_of, int process, bool cooperative,
                           const std::filesystem::path& dir) {
  check_plannable(layout);
  const std::uint64_t align = std::max<std::uint64_t>(
      {64, spec.alignment, std::max<std::uint64_t>(1, spec.direct_alignment)});
  const ReplicaIndex x = index_manifest(manifest, layout, selected, process_of, align);
  std::map<std::int64_t, std::size_t> mine;  // this process's ranks: the index of each one's plan
  for (const auto& [r, h] : x.ranks) {
    if (h.process == process) mine.emplace(r, mine.size());
  }
  Entries held(mine.size()), fetched(mine.size());
  for (const auto& [r, i] : mine) {
    const HeldRank& h = x.ranks.at(r);
    for (const ManifestTensor* t : h.own) {
      held[i].push_back(*t);
      if (!cooperative || !x.replicated.contains(t)) fetched[i].push_back(*t);
    }
    if (r == h.dp0) continue;
    const Replicated& g = x.groups.at(h.dp0);
    for (const ManifestTensor* t : g.pieces) {
      held[i].push_back(*t);
      held[i].back().memory_offset = h.place(*t, g, r);
    }
  }
  ReplicaPlans out;
  if (cooperative) out.shares = share_pieces(x, mine, process, fetched);
  for (const auto& [r, i] : mine) {
    out.held.push_back(plan_identity_rank(manifest, spec, r, pointers(held[i]), dir));
    if (cooperative)
      out.fetched.push_back(plan_identity_rank(manifest, spec, r, pointers(fetched[i]), dir));
  }
  return out;
}

}  // namespace ckpt::harness
