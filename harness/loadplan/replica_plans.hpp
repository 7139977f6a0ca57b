#pragma once

// The same-layout restore that gives every replica the state it holds (restore.replicas): a rank's
// own pieces; then the pieces its DP rank 0 wrote of the state kinds replicated across DP (the
// weights below ZeRO-3; everything under ZeRO-0), placed after its own in its buffer; then, where
// the checkpoint stores the TP-replicated tensors (norms, row-parallel biases, routers) once
// (strategy.layout "dcp": on TP rank 0, or under per-tensor sharding on the TP rank DCP's
// deduplication picks), its copies of what the other TP ranks of its (DP, PP) position hold of
// them, placed after those. Where every TP rank
// stores its own copy ("megatron", "deepspeed"), that copy is its own piece. The cooperative
// restore reads each stored piece once, on the least-loaded process holding it (DCP's cooperative
// load planner), and shares it with the other processes holding it: the ReplicaShare list, the
// same order on every process; a TP rank's stored copy is not read, TP rank 0's piece (the same
// bytes) is sent in its place.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// One replicated piece as this process sees it.
struct ReplicaShare {
  int reader = 0;  // the process that reads it from storage
  std::uint64_t bytes = 0;
  // The reader's: the other processes holding it, ascending (empty on the others, which need only
  // the reader).
  std::vector<int> receivers;
  // Where it lies on this process: (index of the rank's plan, offset in that rank's buffer). The
  // first place is the one read (reader) or received (receiver) into; the others are copies.
  std::vector<std::pair<std::size_t, std::uint64_t>> places;
};

struct ReplicaPlans {
  std::vector<RankPlan> held;  // per rank of this process, ascending: its buffer and its checks
  // cooperative: what this process reads of `held` (the same ranks, places and buffer); the
  // rest comes by `shares`. Empty otherwise (each rank reads its `held` plan).
  std::vector<RankPlan> fetched;
  std::vector<ReplicaShare> shares;  // cooperative: the pieces this process reads or receives
};

// The plans of process `process`, given `process_of`: the process of each of `selected` (the
// selected modeled ranks, ascending; the processes ascending with them). The identity `spec`;
// `layout`: the writer's. Throws ReshardError for a layout it cannot plan (DLIO sizing, expert
// parallelism).
ReplicaPlans replica_plans(const Manifest& manifest, const ReshardSpec& spec,
                           const workloads::Layout& layout,
                           const std::vector<std::int64_t>& selected,
                           const std::vector<int>& process_of, int process, bool cooperative,
                           const std::filesystem::path& dir);

// Every process's plans, as replica_plans plans each, handed to `visit` in process order (0 ..
// processes - 1), in one pass over the pieces: time in proportion to what the ranks hold, not to
// the processes times it, and one process's plans in memory at a time (the dry run's figures).
void for_each_process_replica_plans(
    const Manifest& manifest, const ReshardSpec& spec, const workloads::Layout& layout,
    const std::vector<std::int64_t>& selected, const std::vector<int>& process_of, int processes,
    bool cooperative, const std::filesystem::path& dir,
    const std::function<void(int process, ReplicaPlans plans)>& visit);

}  // namespace ckpt::harness
