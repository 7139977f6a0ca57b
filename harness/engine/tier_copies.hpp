#pragma once

// The tiered engine's copies beside the remote tier: a process's part (its whole checkpoint buffer)
// written to its node's local tier, the clique's parts exchanged over MPI point to point and
// written beside it — every part file through the local tier's backend (tier_files) — and the
// node's mark that a checkpoint's copy there is complete. A part file exists under its name only
// once its last byte is written and synced (written under a temporary name, then renamed); a
// node's copy of a checkpoint counts only once its tiers.json (TierManifest) exists, written after
// every process's parts and replicas were complete.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/checkpoint/tier_manifest.hpp"
#include "harness/comm/comm.hpp"
#include "harness/engine/flush_writes.hpp"
#include "harness/engine/memory_tier.hpp"
#include "harness/engine/tier_files.hpp"
#include "harness/engine/tier_layout.hpp"
#include "harness/results/training_summary.hpp"

namespace ckpt::harness {

// What the tiered engine needs beside the loop's: the layout and where the local tiers are.
struct TierSetup {
  TierLayout layout;
  std::string local_dir;             // tiers.local_dir (with {node})
  int drain_every = 1;               // tiers.drain_every
  std::uint64_t max_part_bytes = 0;  // the largest process's part: every process's chunk count
  std::uint64_t chunk_bytes = std::uint64_t{4} << 20;  // one point-to-point message (> 0)
  int slots = 2;  // received chunks in memory at once, per exchange (bounded memory)
  // tiers.memory: this process's host-memory tier, in front of the local one; null: none.
  MemoryTier* memory = nullptr;
  // tiers.local_backend: what every part file of the local tier is written and read through. Used
  // by one thread at a time: the flush thread (and its replica writer, while the flush thread
  // only exchanges), then the recovery on the loop's thread.
  std::unique_ptr<backends::Backend> local = make_local_tier_backend();
};

// The layout a tiered run's record shows (training.tiers).
TierLayoutRecord tier_layout_record(const TierSetup& setup);

struct ReplicaCounts {
  std::uint64_t sent_bytes = 0;      // this process's part, once per peer
  std::uint64_t received_bytes = 0;  // the peers' parts received
  std::uint64_t written_bytes = 0;   // of them, written into this node's local tier (its backend)
  std::string error;                 // the first failed write, with its path; "" when none
};

// Point to point, every process of the run at once: sends `part` (this process's) to each other
// member of its clique and writes each member's part into this node's local tier, in chunks of
// setup.chunk_bytes through setup.slots bounded slots (a writer thread empties them). Safe on a
// second thread beside the loop's collectives only under MPI_THREAD_MULTIPLE. With a memory tier
// holding replicas (setup.memory, F > 1), each member's part is also kept there as it arrives. A
// failed write still finishes every exchange (the peers must not wait) and comes back in `error`.
ReplicaCounts replicate(Comm& comm, const TierSetup& setup, std::int64_t iteration,
                        std::span<const std::byte> part);

// Collective, after every process's part and replicas of `iteration` are complete: each node's
// first process writes the node's tiers.json (the parts it holds, `remote`: the backend's
// checkpoint directory when drained, else "") and removes the node's other checkpoints. Returns
// the first process's problem everywhere, or "".
std::string tier_commit(Comm& comm, const TierSetup& setup, std::int64_t iteration,
                        const std::string& remote);

// Collective: the local tier of each process's node cannot hold what it must (free space of its
// file system, shared by the nodes of one host, when tiers.local_bytes is 0); the first problem
// everywhere, or "". Makes the node's directory.
std::string tier_capacity_problem(Comm& comm, const TierSetup& setup, std::uint64_t local_bytes);

// When one tiered flush reached each tier on this process, and what went over the interconnect.
// Written by the flush thread, read after its join.
struct TierProgress {
  std::chrono::steady_clock::time_point memory_at;      // its part in the memory tier (if any)
  std::chrono::steady_clock::time_point local_at;       // its part complete in the local tier
  std::chrono::steady_clock::time_point replicated_at;  // every peer's part complete beside it
  ReplicaCounts replicas;
  // Bytes this process wrote into its node's local tier through the tier's backend: its own part
  // and the replicas it received.
  std::uint64_t local_bytes = 0;
};

// The backend's part of a tiered flush: `prepare` (the files' directories; returns a problem or
// "", may be empty), then the writes of `target` through `backend`.
struct TierDrain {
  backends::Backend* backend = nullptr;  // null: this checkpoint stays in the tiers
  std::function<std::string()> prepare;
  const FlushTarget* target = nullptr;
};

// The tiered engine's flush of one snapshot `part` (this process's whole checkpoint buffer in the
// host pool): the part to the memory tier (setup.memory), to the local tier, the clique's exchange
// (always, even after a failed local write: the peers wait for it), then the drain to the backend.
FlushWrites tier_flush(Comm& comm, const TierSetup& setup, std::int64_t iteration,
                       std::span<std::byte> part, const TierDrain& drain, TierProgress& progress);

}  // namespace ckpt::harness
