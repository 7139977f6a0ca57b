#pragma once

// Which modeled ranks each process of a run writes and reads, their plans, and the buffer memory
// they take. The run and `ckptbench run --dry-run` both use these, so the memory a dry run
// reports is what the run allocates.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/loadplan/piece_exchange.hpp"
#include "harness/loadplan/replica_plans.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

class DpGather;

// The contiguous block of the selected modeled ranks that process `process` of `processes`
// emulates.
std::vector<std::int64_t> process_share(const std::vector<std::int64_t>& selected, int process,
                                        int processes);

// read_shift: each reader takes the ranks one node further on, and at least one process's
// block further on, so that no process reads what it wrote (one rank further when alone).
std::vector<std::int64_t> shifted_share(const std::vector<std::int64_t>& selected,
                                        const std::vector<std::int64_t>& mine,
                                        std::int64_t gpus_per_node, int processes);

// The plans of one process in one case, each set in a buffer of its own: what it writes (none in
// the restore phase), and what it reads when that is not what it wrote (read_shift, or the
// restore phase).
struct ProcessPlans {
  std::vector<RankPlan> write;
  std::vector<RankPlan> read;
  // strategy.compression: the frames the write (with room for each shard's at the codec's bound)
  // or the restore moves, in a buffer of their own (compress_plans, decode_plans).
  std::vector<RankPlan> stored;
  // restore.replicas = "cooperative": what the process reads of `read` (the same ranks, in its
  // buffer), and the pieces it then sends or receives (replica_plans).
  std::vector<RankPlan> fetched;
  std::vector<ReplicaShare> shares;
  // A cooperative resharded restore (restore.replicas = "cooperative") or load (load.cooperative):
  // the pieces of every process's `read` plans this process reads into its exchange buffer, sends
  // or receives (plan_piece_exchange).
  PieceExchange exchange;
  // Bytes the process allocates for them: one ProcessBuffer each, and the exchange's buffers.
  std::uint64_t buffer_bytes() const;
};

// One piece of a cooperative read (plan_piece_exchange), and one message of its sending.
inline constexpr std::uint64_t kExchangePieceBytes = std::uint64_t{4} << 20;

// Plans process `process` of `processes` for a checkpoint in `dir`. In the load phase the read
// plans are the process's share of the inference ranks (load_plans), none
// without a manifest. A cooperative resharded restore or load plans every process's reads too, for
// the exchange. In the restore phase the read plans come from the checkpoint's `manifest`
// by the load planner when one is given (reshard_plans: restore.* as the target when resharding,
// else the identity target; throws what it throws), else from the case as it would write them. A
// compressed checkpoint's restore reads the frames the manifest records (stored) and decodes them
// into the read plans' buffer.
ProcessPlans plan_process(const workloads::Layout& layout, const Case& c, PhaseSelection phase,
                          const std::vector<std::int64_t>& selected, int process, int processes,
                          const std::filesystem::path& dir, const Manifest* manifest = nullptr);

// plan_process of each of `processes` processes in turn, handed to `visit`; a cooperative read's
// every-process plans and exchanges planned once for all of them (plan_piece_exchanges), so that
// the time grows with the processes and not with their square (the dry run's figures).
void plan_every_process(const workloads::Layout& layout, const Case& c, PhaseSelection phase,
                        const std::vector<std::int64_t>& selected, int processes,
                        const std::filesystem::path& dir, const Manifest* manifest,
                        const std::function<void(int process, ProcessPlans plans)>& visit);

// Why `need` bytes of buffers per process break campaign.memory_budget (naming what to lower;
// `exchange` of them the cooperative read's exchange buffers), or nullopt when they fit or there
// is no budget.
std::optional<std::string> memory_budget_problem(const Case& c, std::uint64_t need,
                                                 std::size_t modeled_ranks, int processes,
                                                 std::uint64_t exchange = 0);

}  // namespace ckpt::harness
