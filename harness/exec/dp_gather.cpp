#include "harness/exec/dp_gather.hpp"

#include <algorithm>
#include <span>

#include "harness/exec/iteration.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/plan/framework_shards.hpp"
#include "harness/plan/training_state.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kSourceAlignment = 64;

// Which process emulates each selected rank (process_share's blocks).
int process_of(const std::vector<std::int64_t>& selected, int processes, std::int64_t rank) {
  const auto index = static_cast<std::size_t>(
      std::lower_bound(selected.begin(), selected.end(), rank) - selected.begin());
  const std::size_t n = selected.size();
  for (int p = 0; p < processes; ++p) {
    if (index < n * static_cast<std::size_t>(p + 1) / static_cast<std::size_t>(processes)) return p;
  }
  return processes - 1;
}

bool is_selected(const std::vector<std::int64_t>& selected, std::int64_t rank) {
  return std::binary_search(selected.begin(), selected.end(), rank);
}

// The shards of `root_plan` that `holder` holds, placed one after another in a plan of their own.
RankPlan source_plan(const RankPlan& root_plan, std::int64_t holder) {
  RankPlan source;
  source.rank = holder;
  for (const PlacedShard& ps : root_plan.shards) {
    if (ps.holder != holder) continue;
    PlacedShard& placed = source.shards.emplace_back(ps);
    placed.memory_offset =
        (source.buffer_bytes + kSourceAlignment - 1) / kSourceAlignment * kSourceAlignment;
    source.buffer_bytes = placed.memory_offset + placed.bytes;
    source.payload_bytes += placed.bytes;
  }
  return source;
}

// Copies bytes [pos, pos + stage.size()) of the stream the pieces make, between `stage` and
// their places in `buffer` (part `plan` of it at buffer.offset(plan)).
void move_stream(const std::vector<DpGatherPiece>& pieces, const ProcessBuffer& buffer,
                 std::uint64_t pos, std::span<std::byte> stage, bool into_stage) {
  std::uint64_t start = 0;
  for (const DpGatherPiece& piece : pieces) {
    const std::uint64_t end = start + piece.bytes;
    const std::uint64_t from = std::max(start, pos);
    const std::uint64_t to = std::min(end, pos + stage.size());
    if (from < to) {
      const std::uint64_t at = buffer.offset(piece.plan) + piece.offset + (from - start);
      const std::span<std::byte> part = stage.subspan(from - pos, to - from);
      if (into_stage) {
        buffer.memory().copy_to_host(at, part);
      } else {
        buffer.memory().copy_from_host(at, part);
      }
    }
    if (end >= pos + stage.size()) break;
    start = end;
  }
}

}  // namespace

DpGather::DpGather(const workloads::Layout& layout, const Case& c,
                   const std::vector<std::int64_t>& selected, int process, int processes,
                   const std::vector<RankPlan>& write_plans, const std::filesystem::path& dir)
    : selected_(selected) {
  std::sort(selected_.begin(), selected_.end());
  if (!gathers_distributed_optimizer(c, layout)) return;
  // Receiving: this process's roots, one transfer per selected holder.
  for (std::size_t p = 0; p < write_plans.size(); ++p) {
    const RankPlan& plan = write_plans[p];
    for (const PlacedShard& ps : plan.shards) {
      if (ps.holder < 0 || ps.holder == plan.rank || !is_selected(selected_, ps.holder)) continue;
      auto t = std::find_if(transfers_.begin(), transfers_.end(), [&](const Transfer& x) {
        return x.root == plan.rank && x.holder == ps.holder;
      });
      if (t == transfers_.end()) {
        t = transfers_.insert(transfers_.end(),
                              Transfer{plan.rank,
                                       ps.holder,
                                       process_of(selected_, processes, ps.holder),
                                       process,
                                       {},
                                       {},
                                       0});
      }
      t->target.push_back({p, ps.memory_offset, ps.bytes});
      t->bytes += ps.bytes;
    }
  }
  // Sending: this process's holders whose root is selected.
  for (const std::int64_t holder : process_share(selected_, process, processes)) {
    const std::int64_t root = gather_root(layout, c, holder);
    if (root == holder || !is_selected(selected_, root)) continue;
    const int to = process_of(selected_, processes, root);
    const auto local = std::find_if(write_plans.begin(), write_plans.end(),
                                    [&](const RankPlan& p) { return p.rank == root; });
    RankPlan source = local != write_plans.end()
                          ? source_plan(*local, holder)
                          : source_plan(plan_ranks(layout, c, {root}, dir).front(), holder);
    if (source.shards.empty()) continue;
    auto t = std::find_if(transfers_.begin(), transfers_.end(),
                          [&](const Transfer& x) { return x.root == root && x.holder == holder; });
    if (t == transfers_.end())
      t = transfers_.insert(transfers_.end(),
                            Transfer{root, holder, process, to, {}, {}, source.payload_bytes});
    for (const PlacedShard& ps : source.shards)
      t->source.push_back({sources_.size(), ps.memory_offset, ps.bytes});
    sources_.push_back(std::move(source));
  }
  std::sort(transfers_.begin(), transfers_.end(), [](const Transfer& a, const Transfer& b) {
    return std::pair(a.root, a.holder) < std::pair(b.root, b.holder);
  });
}

void DpGather::prepare(MemorySpace& space, DataPattern pattern) {
  std::uint64_t largest = 0;
  for (const Transfer& t : transfers_) largest = std::max(largest, t.bytes);
  stage_.assign(std::min(largest, kGatherChunkBytes), std::byte{0});  // touched before any clock
  if (sources_.empty()) return;
  source_buffer_ = ProcessBuffer(sources_, space);
  fill_plans(sources_, source_buffer_, pattern);
}

void DpGather::fill_sources(DataPattern pattern, std::int64_t iteration) {
  if (!sources_.empty())
    fill_plans(plans_at_iteration(sources_, iteration), source_buffer_, pattern);
}

std::vector<RankPlan> DpGather::fill_held_only(const std::vector<RankPlan>& write_plans) const {
  std::vector<RankPlan> held = write_plans;
  for (RankPlan& plan : held) {
    std::erase_if(plan.shards, [&](const PlacedShard& ps) {
      return ps.holder >= 0 && ps.holder != plan.rank && is_selected(selected_, ps.holder);
    });
  }
  return held;
}

GatherCounts DpGather::run(Comm& comm, ProcessBuffer& write_buffer) {
  GatherCounts counts;
  const int me = comm.rank();
  for (const Transfer& t : transfers_) {
    for (std::uint64_t pos = 0; pos < t.bytes; pos += kGatherChunkBytes) {
      const std::span<std::byte> chunk(stage_.data(), std::min(kGatherChunkBytes, t.bytes - pos));
      if (t.from == me) move_stream(t.source, source_buffer_, pos, chunk, true);
      if (t.from != t.to && t.from == me) comm.send(t.to, chunk);
      if (t.from != t.to && t.to == me) comm.receive(t.from, chunk);
      if (t.to == me) move_stream(t.target, write_buffer, pos, chunk, false);
    }
    if (t.to == me) (t.from == me ? counts.local_bytes : counts.received_bytes) += t.bytes;
  }
  return counts;
}

}  // namespace ckpt::harness
