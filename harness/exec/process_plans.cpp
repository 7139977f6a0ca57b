#include "harness/exec/process_plans.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "harness/checkpoint/manifest.hpp"
#include "harness/common/text_format.hpp"
#include "harness/exec/codec_plans.hpp"
#include "harness/exec/dp_gather.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/loadplan/dataset_load_plan.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/training_state.hpp"

namespace ckpt::harness {

std::vector<std::int64_t> process_share(const std::vector<std::int64_t>& selected, int process,
                                        int processes) {
  const std::size_t n = selected.size();
  const auto p = static_cast<std::size_t>(process);
  const auto procs = static_cast<std::size_t>(processes);
  return {selected.begin() + static_cast<std::ptrdiff_t>(n * p / procs),
          selected.begin() + static_cast<std::ptrdiff_t>(n * (p + 1) / procs)};
}

std::vector<std::int64_t> shifted_share(const std::vector<std::int64_t>& selected,
                                        const std::vector<std::int64_t>& mine,
                                        std::int64_t gpus_per_node, int processes) {
  const auto n = static_cast<std::int64_t>(selected.size());
  const std::int64_t block = (n + processes - 1) / processes;
  const std::int64_t shift =
      std::max<std::int64_t>({n > gpus_per_node ? gpus_per_node : 1, processes > 1 ? block : 1});
  std::vector<std::int64_t> out;
  for (std::int64_t r : mine) {
    const auto index = std::lower_bound(selected.begin(), selected.end(), r) - selected.begin();
    out.push_back(selected[static_cast<std::size_t>((index + shift) % n)]);
  }
  return out;
}

std::uint64_t ProcessPlans::buffer_bytes() const {
  return ProcessBuffer::bytes_for(write) + ProcessBuffer::bytes_for(read) +
         ProcessBuffer::bytes_for(stored) + exchange.buffer_bytes();
}

namespace {

// What campaign.memory_budget leaves a cooperative read's exchange buffers beside the largest
// process's rank buffers (0: no budget, no bound; at least a byte); the same on every process, so
// that all run the same rounds.
std::uint64_t exchange_budget(const Case& c, const std::vector<std::vector<RankPlan>>& by_process) {
  if (c.memory_budget == 0) return 0;
  std::uint64_t widest = 0;
  for (const std::vector<RankPlan>& plans : by_process)
    widest = std::max(widest, ProcessBuffer::bytes_for(plans));
  return c.memory_budget > widest ? c.memory_budget - widest : 1;
}

// A cooperative read (load.cooperative, or a resharded restore.replicas = "cooperative"): the
// modeled ranks it reads (each process its process_share of them), their plans, and the alignment
// of the exchange buffer's pieces (backend.direct's).
struct CooperativeRead {
  std::vector<std::int64_t> ranks;
  std::function<std::vector<RankPlan>(const std::vector<std::int64_t>& ranks)> plan;
  std::uint64_t alignment = 64;
};

std::optional<CooperativeRead> cooperative_read(const Case& c, PhaseSelection phase,
                                                const std::filesystem::path& dir,
                                                const Manifest* manifest) {
  if (manifest == nullptr) return std::nullopt;
  if (phase == PhaseSelection::load && c.load.cooperative) {
    if (plans_datasets(manifest->writer.backend)) {
      throw ReshardError(fmt::format(
          "load.cooperative = true shares byte ranges of the stored files between processes, and "
          "a checkpoint of backend.name = \"{}\" is read as hyperslabs of its datasets; set "
          "load.cooperative = false",
          manifest->writer.backend));
    }
    return CooperativeRead{inference_ranks(c.load.inference),
                           [&c, manifest, dir](const std::vector<std::int64_t>& ranks) {
                             return load_plans(*manifest, load_spec(c), ranks, dir);
                           }};
  }
  if (phase == PhaseSelection::restore && !manifest->writer.compression.enabled() &&
      c.restore.reshard && c.restore.replicas == ReplicaRead::cooperative) {
    const ReshardSpec spec = reshard_spec(c);
    return CooperativeRead{restore_selected_ranks(c),
                           [manifest, dir, spec](const std::vector<std::int64_t>& ranks) {
                             return reshard_plans(*manifest, spec, ranks, dir);
                           },
                           std::max<std::uint64_t>(64, spec.direct_alignment)};
  }
  return std::nullopt;
}

// Every process's plans, planned in one call for all of their ranks (the manifest's checks and
// index made once, not once per process) and handed out by rank: each process's in the order a
// call for its own ranks gives (the planner's order is a stable sort, and the shares are disjoint
// and concatenated in process order).
std::vector<std::vector<RankPlan>> every_process_plans(const CooperativeRead& read, int processes) {
  std::map<std::int64_t, std::size_t> owner;
  std::vector<std::int64_t> all;
  for (int q = 0; q < processes; ++q) {
    for (const std::int64_t rank : process_share(read.ranks, q, processes)) {
      owner.emplace(rank, static_cast<std::size_t>(q));
      all.push_back(rank);
    }
  }
  std::vector<std::vector<RankPlan>> every(static_cast<std::size_t>(processes));
  for (RankPlan& plan : read.plan(all)) every[owner.at(plan.rank)].push_back(std::move(plan));
  return every;
}

// restore.replicas = "read" or "cooperative" in a same-layout restore: every replica's copies
// (replica_plans).
bool reads_replicas(const Case& c, PhaseSelection phase, const Manifest* manifest) {
  return phase == PhaseSelection::restore && manifest != nullptr &&
         !manifest->writer.compression.enabled() && !c.restore.reshard &&
         c.restore.replicas != ReplicaRead::written;
}

// The process of each of `ranks` selected ranks, as process_share hands them out.
std::vector<int> process_of_ranks(std::size_t ranks, int processes) {
  std::vector<int> process_of;
  process_of.reserve(ranks);
  const auto procs = static_cast<std::size_t>(processes);
  for (std::size_t q = 0; q < procs; ++q)
    process_of.resize(ranks * (q + 1) / procs, static_cast<int>(q));
  return process_of;
}

ProcessPlans replica_process_plans(const workloads::Layout& layout, const Case& c,
                                   ReplicaPlans replicas) {
  ProcessPlans plans;
  plans.read = std::move(replicas.held);
  plans.fetched = std::move(replicas.fetched);
  plans.shares = std::move(replicas.shares);
  for (auto* set : {&plans.read, &plans.fetched}) {
    for (RankPlan& plan : *set) plan.io.attributes = checkpoint_attributes(layout, c);
  }
  return plans;
}

}  // namespace

ProcessPlans plan_process(const workloads::Layout& layout, const Case& c, PhaseSelection phase,
                          const std::vector<std::int64_t>& selected, int process, int processes,
                          const std::filesystem::path& dir, const Manifest* manifest) {
  if (const std::optional<CooperativeRead> read = cooperative_read(c, phase, dir, manifest)) {
    // Every process's plans: this one's kept as plans.read, the pieces of all of them planned for
    // the exchange, in rounds when campaign.memory_budget would not hold it in one.
    std::vector<std::vector<RankPlan>> every = every_process_plans(*read, processes);
    ProcessPlans plans;
    plans.exchange = plan_piece_exchange(every, process, kExchangePieceBytes, read->alignment,
                                         exchange_budget(c, every));
    plans.read = std::move(every[static_cast<std::size_t>(process)]);
    return plans;
  }
  const std::vector<std::int64_t> mine = process_share(selected, process, processes);
  const bool shift = c.cache == CachePolicy::read_shift;
  const auto read_ranks = [&] {
    return shift ? shifted_share(selected, mine, c.ranks.gpus_per_node, processes) : mine;
  };
  ProcessPlans plans;
  if (phase == PhaseSelection::load) {  // the inference ranks' slices; nothing to plan without the
                                        // checkpoint
    if (manifest == nullptr) return plans;
    plans.read =
        load_plans(*manifest, load_spec(c),
                   process_share(inference_ranks(c.load.inference), process, processes), dir);
    return plans;
  }
  if (phase == PhaseSelection::restore && manifest == nullptr) {
    plans.read = plan_ranks(layout, c, read_ranks(), dir);
    return plans;
  }
  if (phase == PhaseSelection::restore && manifest->writer.compression.enabled()) {
    // A [training] checkpoint holds the state of the iteration its manifest names.
    plans.read =
        plans_at_iteration(plan_ranks(layout, c, read_ranks(), dir), manifest->iteration());
    // A delta's state: each block as the update left it at the checkpoint's step.
    if (const SelectiveSpec& z = manifest->writer.selective; z.delta()) {
      for (RankPlan& plan : plans.read) {
        for (PlacedShard& shard : plan.shards)
          shard.updates = {z.block_bytes, z.changed_per_million, manifest->step};
      }
    }
    plans.stored = manifest_stored_plans(*manifest, plans.read, c);
    return plans;
  }
  if (phase == PhaseSelection::restore && c.restore.reshard) {
    plans.read = reshard_plans(*manifest, reshard_spec(c),
                               process_share(restore_selected_ranks(c), process, processes), dir);
    return plans;
  }
  if (reads_replicas(c, phase, manifest)) {
    return replica_process_plans(
        layout, c,
        replica_plans(*manifest, identity_spec(c), layout, selected,
                      process_of_ranks(selected.size(), processes), process,
                      c.restore.replicas == ReplicaRead::cooperative, dir));
  }
  if (phase == PhaseSelection::restore) {  // the identity target: what these ranks wrote
    plans.read = reshard_plans(*manifest, identity_spec(c), read_ranks(), dir);
    for (RankPlan& plan : plans.read) plan.io.attributes = checkpoint_attributes(layout, c);
    return plans;
  }
  plans.write = plan_ranks(layout, c, mine, dir);
  if (c.compression.enabled()) plans.stored = bounded_stored_plans(plans.write, c);
  if (shift && phase != PhaseSelection::checkpoint)
    plans.read = plan_ranks(layout, c, read_ranks(), dir);
  return plans;
}

void plan_every_process(const workloads::Layout& layout, const Case& c, PhaseSelection phase,
                        const std::vector<std::int64_t>& selected, int processes,
                        const std::filesystem::path& dir, const Manifest* manifest,
                        const std::function<void(int process, ProcessPlans plans)>& visit) {
  if (reads_replicas(c, phase, manifest)) {
    for_each_process_replica_plans(
        *manifest, identity_spec(c), layout, selected, process_of_ranks(selected.size(), processes),
        processes, c.restore.replicas == ReplicaRead::cooperative, dir,
        [&](int p, ReplicaPlans replicas) {
          visit(p, replica_process_plans(layout, c, std::move(replicas)));
        });
    return;
  }
  const std::optional<CooperativeRead> read = cooperative_read(c, phase, dir, manifest);
  if (!read) {
    for (int p = 0; p < processes; ++p)
      visit(p, plan_process(layout, c, phase, selected, p, processes, dir, manifest));
    return;
  }
  std::vector<std::vector<RankPlan>> every = every_process_plans(*read, processes);
  std::vector<PieceExchange> exchanges =
      plan_piece_exchanges(every, kExchangePieceBytes, read->alignment, exchange_budget(c, every));
  for (int p = 0; p < processes; ++p) {
    const auto i = static_cast<std::size_t>(p);
    ProcessPlans plans;
    plans.exchange = std::move(exchanges[i]);
    plans.read = std::move(every[i]);
    visit(p, std::move(plans));
  }
}

std::optional<std::string> memory_budget_problem(const Case& c, std::uint64_t need,
                                                 std::size_t modeled_ranks, int processes,
                                                 std::uint64_t exchange) {
  if (c.memory_budget == 0 || need <= c.memory_budget) return std::nullopt;
  const std::string cooperative =
      exchange == 0 ? ""
                    : fmt::format(
                          ", of which {} are the cooperative read's exchange buffers, with a "
                          "piece per round (set "
                          "restore.replicas = \"written\" or load.cooperative = false to read "
                          "without them),",
                          format_bytes(static_cast<std::int64_t>(exchange)));
  return fmt::format(
      "campaign.memory_budget: the case needs {} of buffers per process ({} modeled ranks over {} "
      "processes){} but the budget is {}; raise model.scale (now {}), select fewer ranks "
      "(ranks.select), run more processes, or raise campaign.memory_budget",
      format_bytes(static_cast<std::int64_t>(need)), modeled_ranks, processes, cooperative,
      format_bytes(static_cast<std::int64_t>(c.memory_budget)), c.scale);
}

}  // namespace ckpt::harness
