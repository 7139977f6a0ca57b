#pragma once

// Recovery after losing nodes: every process's part restored from the nearest tier that still
// holds it complete — its own memory tier (a surviving process of a job with tiers.memory), its
// own node's local tier, a clique peer's (sent over MPI point to point), or the remote tier (the
// backend's newest committed checkpoint) — all at one training iteration.

#include <chrono>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/comm/comm.hpp"
#include "harness/engine/tier_copies.hpp"
#include "harness/engine/tier_layout.hpp"

namespace ckpt::harness {

enum class PartSource { memory, local, peer, remote };
std::string_view part_source_name(PartSource source);

// What one node's local tier holds complete (its tiers.json): a checkpoint's iteration (-1: none,
// or the node is lost) and the processes whose parts it has.
struct NodeHolding {
  std::int64_t iteration = -1;
  std::vector<int> parts;
  // A tiers.json of the node that read_tier_manifest refused (its message, naming the file and the
  // key); "" when none. Recovery refuses rather than guess what the node holds.
  std::string damaged;
};

// The processes' agreed recovery: one iteration, and per process where its part comes from.
struct RecoveryPlan {
  std::int64_t iteration = -1;
  std::vector<PartSource> source;  // per process
  std::vector<int> from;           // per process: the process holding the copy (peer), else itself
  // Per process, for a part from a peer: the peer sends it from its memory tier's replicas (no
  // read), else from its node's local tier. Empty: none from memory.
  std::vector<bool> peer_memory;
};

// Pure: the newest iteration the surviving nodes hold, each part from its process's memory tier
// when it holds that iteration (`memory`: per process, the iteration its memory tier holds, -1 or
// an empty vector: none), else from its own node, else from a surviving clique peer's memory tier
// when the memory tiers hold the clique's replicas (`replicas_in_memory`), else from a surviving
// clique peer's node, else from the remote tier when it holds that iteration (`remote_iteration`,
// -1: none); when some part is nowhere at that iteration, every part from the remote tier's older
// checkpoint. A string (the refusal, naming the part, its lost clique and the keys to change) when
// neither works.
std::variant<RecoveryPlan, std::string> plan_recovery(
    const TierLayout& layout, const std::vector<NodeHolding>& nodes, const std::set<int>& lost,
    std::int64_t remote_iteration, int drain_every, const std::vector<std::int64_t>& memory = {},
    bool replicas_in_memory = false);

// Collective: each lost node's local tier removed (its first process does it), then every
// surviving node's holding read from its tiers.json (read_tier_manifest), on every process.
std::vector<NodeHolding> survey_nodes(Comm& comm, const TierSetup& setup,
                                      const std::set<int>& lost);

// Collective: per process, the iteration its memory tier holds complete (setup.memory), -1 for
// a process without one or on a lost node (its memory went with it); on every process.
std::vector<std::int64_t> survey_memory(Comm& comm, const TierSetup& setup,
                                        const std::set<int>& lost);

struct RecoveryBytes {
  std::uint64_t memory = 0;  // copied from this process's memory tier
  std::uint64_t local = 0;   // read from this process's node's local tier
  std::uint64_t peer = 0;    // received from a peer's node over MPI
  std::string error;         // the first problem (a missing or short copy), "" when none
  // When this process's part was in place (memory, local, peer); the epoch when it is the
  // caller's to read (remote).
  std::chrono::steady_clock::time_point in_place{};
};

// Collective: the parts `plan` takes from the memory and local tiers into `part` (this process's
// state buffer): its memory tier's copy (setup.memory), its own node's file read, a peer's (from
// the peer's memory tier, or read from its node's file) sent in chunks of setup.chunk_bytes (the
// transfers in one order on every process, so blocking pairs cannot deadlock); every file read
// through the local tier's backend (setup.local). Parts from the remote tier are the caller's
// (through the case's backend).
RecoveryBytes fetch_parts(Comm& comm, const TierSetup& setup, const RecoveryPlan& plan,
                          std::span<std::byte> part);

}  // namespace ckpt::harness
