#include "harness/loadplan/replica_plans.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "harness/common/align.hpp"
#include "harness/loadplan/least_loaded.hpp"
#include "harness/plan/framework_shards.hpp"

namespace ckpt::harness {
namespace {

using Piece = const ManifestTensor*;

// A piece in one selected rank's buffer: the rank (its index in `selected`) and the offset there.
struct Place {
  std::size_t rank = 0;
  std::uint64_t offset = 0;
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

// Whether the checkpoint stores the TP-replicated tensors on TP rank 0 alone, so that the other TP
// ranks' copies come from its pieces (the framework formats store one on every TP rank).
bool stores_tp_replicas_once(const Manifest& manifest) {
  const DirectoryLayout d = manifest.layout.directory_layout;
  return d != DirectoryLayout::megatron && d != DirectoryLayout::deepspeed;
}

// What every selected rank holds and where, from the manifest: its own pieces where it wrote them,
// its DP rank 0's DP-replicated pieces after them, its TP copies after those.
class Holdings {
 public:
  Holdings(const Manifest& manifest, const workloads::Layout& layout,
           const std::vector<std::int64_t>& selected, std::uint64_t align)
      : layout_(layout), align_(align), held_(selected.size()) {
    for (const ManifestTensor& t : manifest.tensors) written_[t.rank].push_back(&t);
    const bool tp_copies = stores_tp_replicas_once(manifest) && layout.parallel().tp > 1;
    if (!stores_tp_replicas_once(manifest) && layout.parallel().tp > 1) find_stored_copies();
    for (std::size_t i = 0; i < selected.size(); ++i) {
      const std::int64_t r = selected[i];
      const workloads::RankCoord c = layout.coord(r);
      const std::int64_t dp0 = r - layout.parallel().tp * c.dp;
      std::uint64_t end = 0;
      for (const Piece t : written(r)) {
        held_[i].emplace_back(t, t->memory_offset);
        end = std::max(end, t->memory_offset + t->bytes);
      }
      const DpGroup& group = dp_group(dp0);
      for (const Piece t : group.pieces) replicated_.insert(t);
      if (c.dp != 0) {
        const std::uint64_t base = align_up(end, align_);
        for (const Piece t : group.pieces) {
          held_[i].emplace_back(t, base + (t->memory_offset - group.begin));
          end = std::max(end, base + (t->memory_offset - group.begin) + t->bytes);
        }
      }
      const std::int64_t tp0 = r - c.tp;
      for (std::int64_t q = tp0; tp_copies && q < tp0 + layout.tp_ranks_writing_replicas(); ++q) {
        if (q == r) continue;
        for (const Piece t : tp_copies_of(q)) {
          const std::uint64_t at = align_up(end, align_);
          held_[i].emplace_back(t, at);
          end = at + t->bytes;
        }
      }
      for (const auto& [t, offset] : held_[i]) places_[original(t)].push_back({i, offset});
    }
  }

  // What rank `selected[i]` holds: each piece and its offset in the rank's buffer, its own first.
  const std::vector<std::pair<Piece, std::uint64_t>>& held(std::size_t i) const { return held_[i]; }
  // What rank `rank` wrote, in manifest order.
  const std::vector<Piece>& written(std::int64_t rank) const {
    static const std::vector<Piece> none;
    const auto it = written_.find(rank);
    return it == written_.end() ? none : it->second;
  }
  // Every written piece in one order: by the rank that wrote it, then as the manifest lists them.
  template <class Visit>
  void for_each_piece(Visit&& visit) const {
    for (const auto& [rank, pieces] : written_) {
      for (const Piece t : pieces) visit(t);
    }
  }
  // The selected ranks holding `t`, ascending, and where.
  const std::vector<Place>& places(Piece t) const {
    static const std::vector<Place> none;
    const auto it = places_.find(t);
    return it == places_.end() ? none : it->second;
  }
  // Whether the cooperative read has a reader picked for `t`: a piece several ranks hold, or one
  // a DP rank 0 wrote of the state replicated across DP.
  bool picked(Piece t) const { return replicated_.contains(t) || places(t).size() > 1; }
  // Whether `t` is a TP rank's stored copy of TP rank 0's piece, which the cooperative read reads
  // in its stead (the same bytes): its places are that piece's.
  bool stored_copy(Piece t) const { return copies_.contains(t); }

 private:
  // The pieces DP rank 0 of one (TP, PP) position wrote of the kinds replicated across DP, in
  // manifest order, and where its buffer held the first of them.
  struct DpGroup {
    std::vector<Piece> pieces;
    std::uint64_t begin = 0;
  };

  const DpGroup& dp_group(std::int64_t dp0) {
    const auto [it, added] = groups_.try_emplace(dp0);
    DpGroup& g = it->second;
    if (!added) return g;
    for (const Piece t : written(dp0)) {
      if (t->holder < 0 && layout_.replicated_across_dp(t->shard.state)) g.pieces.push_back(t);
    }
    g.begin = g.pieces.empty() ? 0 : g.pieces.front()->memory_offset;
    for (const Piece t : g.pieces) g.begin = std::min(g.begin, t->memory_offset);
    return g;
  }

  // What TP rank `peer` holds of the TP-replicated tensors it wrote or its DP rank 0 wrote: its
  // own pieces of them, then its DP rank 0's replicated ones.
  const std::vector<Piece>& tp_copies_of(std::int64_t peer) {
    const auto [it, added] = tp_copies_.try_emplace(peer);
    if (!added) return it->second;
    const std::int64_t dp = layout_.coord(peer).dp;
    std::vector<Piece> held = written(peer);
    if (dp != 0) {
      const DpGroup& group = dp_group(peer - layout_.parallel().tp * dp);
      held.insert(held.end(), group.pieces.begin(), group.pieces.end());
    }
    for (const Piece t : held) {
      if (tp_replicated(t->shard)) it->second.push_back(t);
    }
    return it->second;
  }

  // strategy.layout "megatron" and "deepspeed": each TP rank's pieces of the TP-replicated
  // tensors, copies of TP rank 0's (the same tensor, state and elements, gathered from the same
  // DP rank).
  void find_stored_copies() {
    using Key = std::tuple<std::string_view, workloads::StateKind, std::int64_t, std::int64_t,
                           std::int64_t>;
    const auto key = [this](Piece t) {
      const std::int64_t holder_dp = t->holder < 0 ? -1 : layout_.coord(t->holder).dp;
      return Key{t->shard.name, t->shard.state, t->shard.flat_begin, t->shard.flat_end, holder_dp};
    };
    std::map<std::int64_t, std::map<Key, Piece>> originals;  // by TP rank 0
    for (const auto& [rank, pieces] : written_) {
      if (layout_.coord(rank).tp != 0) continue;
      for (const Piece t : pieces) {
        if (tp_replicated(t->shard)) originals[rank].emplace(key(t), t);
      }
    }
    for (const auto& [rank, pieces] : written_) {
      const std::int64_t t0 = rank - layout_.coord(rank).tp;
      if (t0 == rank || !originals.contains(t0)) continue;
      const std::map<Key, Piece>& of = originals.at(t0);
      for (const Piece t : pieces) {
        if (!tp_replicated(t->shard)) continue;
        if (const auto it = of.find(key(t)); it != of.end() && it->second->bytes == t->bytes)
          copies_.emplace(t, it->second);
      }
    }
  }

  // The piece `t` is a stored copy of, or `t`.
  Piece original(Piece t) const {
    const auto it = copies_.find(t);
    return it == copies_.end() ? t : it->second;
  }

  const workloads::Layout& layout_;
  std::uint64_t align_;
  std::map<std::int64_t, std::vector<Piece>> written_;    // by the rank that wrote them
  std::map<std::int64_t, DpGroup> groups_;                // by DP rank 0
  std::map<std::int64_t, std::vector<Piece>> tp_copies_;  // by TP rank 0
  std::vector<std::vector<std::pair<Piece, std::uint64_t>>> held_;
  std::unordered_map<Piece, std::vector<Place>> places_;
  std::set<Piece> replicated_;               // the DP groups' pieces of the selected ranks
  std::unordered_map<Piece, Piece> copies_;  // a TP rank's stored copy -> TP rank 0's piece
};

using Entries = std::vector<ManifestTensor>;  // pieces placed in one rank's buffer

// `t` placed at `offset` of a rank's buffer.
ManifestTensor placed(const ManifestTensor& t, std::uint64_t offset) {
  ManifestTensor out = t;
  out.memory_offset = offset;
  return out;
}

// `entries` in the order of their places in the rank's buffer.
std::vector<const ManifestTensor*> pointers(const Entries& entries) {
  std::vector<const ManifestTensor*> out;
  for (const ManifestTensor& t : entries) out.push_back(&t);
  std::stable_sort(out.begin(), out.end(), [](const ManifestTensor* a, const ManifestTensor* b) {
    return a->memory_offset < b->memory_offset;
  });
  return out;
}

// The plans being made: every process's (`only` < 0) or process `only`'s alone. Per selected rank
// (index in `selected`), what it holds and what it reads; per process, its shares.
class ReplicaBuild {
 public:
  ReplicaBuild(const Holdings& holdings, const std::vector<int>& process_of, int processes,
               int only, bool cooperative)
      : holdings_(holdings),
        process_of_(process_of),
        only_(only),
        cooperative_(cooperative),
        plan_of_(process_of.size(), 0),
        first_(static_cast<std::size_t>(processes) + 1, process_of.size()),
        held_(process_of.size()),
        fetched_(process_of.size()),
        shares_(static_cast<std::size_t>(processes)) {
    for (std::size_t i = process_of.size(); i-- > 0;)
      first_[static_cast<std::size_t>(process_of[i])] = i;
    for (std::size_t q = static_cast<std::size_t>(processes); q-- > 0;)
      first_[q] = std::min(first_[q], first_[q + 1]);
    for (std::size_t i = 0; i < process_of.size(); ++i)
      plan_of_[i] = i - first_[static_cast<std::size_t>(process_of[i])];
  }

  bool built(int q) const { return only_ < 0 || q == only_; }

  // What every built rank holds, and (cooperative) reads of its own pieces no other rank holds.
  void place(const std::vector<std::int64_t>& selected) {
    for (std::size_t i = 0; i < process_of_.size(); ++i) {
      if (!built(process_of_[i])) continue;
      for (const auto& [t, offset] : holdings_.held(i)) held_[i].push_back(placed(*t, offset));
      if (!cooperative_) continue;
      for (const Piece t : holdings_.written(selected[i])) {
        if (!holdings_.picked(t) && !holdings_.stored_copy(t)) fetched_[i].push_back(*t);
      }
    }
  }

  // The cooperative read's sharing of every piece with a picked reader, in one order on every
  // process: the built processes' shares, and the pieces their ranks read added to `fetched_`.
  void share() {
    LeastLoaded readers;
    std::vector<int> holders;
    holdings_.for_each_piece([&](const Piece t) {
      if (!holdings_.picked(t)) return;
      const std::vector<Place>& places = holdings_.places(t);
      if (places.empty()) return;
      holders.clear();
      for (const Place& p : places) holders.push_back(process_of_[p.rank]);
      std::sort(holders.begin(), holders.end());
      holders.erase(std::unique(holders.begin(), holders.end()), holders.end());
      const int reader = readers.pick(holders, t->bytes);
      // The places of one process are adjacent: the processes ascend with the ranks.
      for (std::size_t first = 0; first < places.size();) {
        const int q = process_of_[places[first].rank];
        std::size_t end = first;
        while (end < places.size() && process_of_[places[end].rank] == q) ++end;
        if (built(q)) add_share(*t, reader, holders, q, {places.data() + first, end - first});
        first = end;
      }
    });
  }

  // Process `q`'s plans, its entries released.
  ReplicaPlans plans(int q, const Manifest& manifest, const ReshardSpec& spec,
                     const std::vector<std::int64_t>& selected, const std::filesystem::path& dir) {
    ReplicaPlans out;
    out.shares = std::move(shares_[static_cast<std::size_t>(q)]);
    const auto p = static_cast<std::size_t>(q);
    for (std::size_t i = first_[p]; i < first_[p + 1]; ++i) {
      out.held.push_back(plan_identity_rank(manifest, spec, selected[i], pointers(held_[i]), dir));
      if (cooperative_)
        out.fetched.push_back(
            plan_identity_rank(manifest, spec, selected[i], pointers(fetched_[i]), dir));
      Entries().swap(held_[i]);
      Entries().swap(fetched_[i]);
    }
    return out;
  }

 private:
  void add_share(const ManifestTensor& t, int reader, const std::vector<int>& holders, int q,
                 std::span<const Place> mine) {
    ReplicaShare share{.reader = reader, .bytes = t.bytes};
    if (q == reader) {
      for (const int h : holders) {
        if (h != reader) share.receivers.push_back(h);
      }
      fetched_[mine.front().rank].push_back(placed(t, mine.front().offset));
    }
    for (const Place& p : mine) share.places.emplace_back(plan_of_[p.rank], p.offset);
    if (holders.size() > 1 || mine.size() > 1)
      shares_[static_cast<std::size_t>(q)].push_back(std::move(share));
  }

  const Holdings& holdings_;
  const std::vector<int>& process_of_;
  int only_;
  bool cooperative_;
  std::vector<std::size_t> plan_of_;  // per selected rank: the index of its plan on its process
  std::vector<std::size_t> first_;    // per process (and one past the last): its first rank
  std::vector<Entries> held_, fetched_;
  std::vector<std::vector<ReplicaShare>> shares_;  // per process
};

Holdings holdings_of(const Manifest& manifest, const ReshardSpec& spec,
                     const workloads::Layout& layout, const std::vector<std::int64_t>& selected) {
  check_plannable(layout);
  const std::uint64_t align = std::max<std::uint64_t>(
      {64, spec.alignment, std::max<std::uint64_t>(1, spec.direct_alignment)});
  return Holdings(manifest, layout, selected, align);
}

// The processes: one past the last one `process_of` names, and at least `at_least`.
int process_count(const std::vector<int>& process_of, int at_least) {
  int n = at_least;
  for (const int q : process_of) n = std::max(n, q + 1);
  return n;
}

}  // namespace

ReplicaPlans replica_plans(const Manifest& manifest, const ReshardSpec& spec,
                           const workloads::Layout& layout,
                           const std::vector<std::int64_t>& selected,
                           const std::vector<int>& process_of, int process, bool cooperative,
                           const std::filesystem::path& dir) {
  const Holdings holdings = holdings_of(manifest, spec, layout, selected);
  ReplicaBuild build(holdings, process_of, process_count(process_of, process + 1), process,
                     cooperative);
  build.place(selected);
  if (cooperative) build.share();
  return build.plans(process, manifest, spec, selected, dir);
}

void for_each_process_replica_plans(
    const Manifest& manifest, const ReshardSpec& spec, const workloads::Layout& layout,
    const std::vector<std::int64_t>& selected, const std::vector<int>& process_of, int processes,
    bool cooperative, const std::filesystem::path& dir,
    const std::function<void(int process, ReplicaPlans plans)>& visit) {
  const Holdings holdings = holdings_of(manifest, spec, layout, selected);
  ReplicaBuild build(holdings, process_of, process_count(process_of, processes), -1, cooperative);
  build.place(selected);
  if (cooperative) build.share();
  for (int q = 0; q < processes; ++q) visit(q, build.plans(q, manifest, spec, selected, dir));
}

}  // namespace ckpt::harness
