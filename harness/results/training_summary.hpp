#pragma once

// What the training loop measured: per checkpoint and as case medians (results/SCHEMA.md,
// "training").

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::harness {

// An interval in seconds from the loop's start; `end` < 0: it did not happen.
struct TimeSpan {
  double start = -1, end = -1;
  bool ran() const { return end >= 0; }
};

// When one iteration's parts ran, in seconds from the loop's start on this process's clock: what
// the report's timeline of the loop draws.
struct IterationTimes {
  double start = 0;         // its compute begins
  double compute_end = 0;   // the compute's share waited out
  double update_start = 0;  // the update begins: later than compute_end by lazy's wait for a copy
  double end = 0;           // the update's share waited out; a checkpoint due now is due here
};

// When one checkpoint's steps ran, in the same seconds. Its stall on the loop is due to resumed
// (plus, for lazy, the next iteration's wait before its update), and it is durable at due +
// time_to_durable_seconds, the end of `commit`.
struct CheckpointTimes {
  // The loop stopped for it. Sync after a DP gather: later by the harness's checksums of the
  // gathered state, which neither the stall nor the time to durable counts.
  double due = 0;
  double resumed = 0;  // the loop went on
  TimeSpan snapshot;   // the copy into the host pool (sync: none)
  TimeSpan flush;      // the writes
  TimeSpan commit;     // manifest and `latest`; its end is the checkpoint's durable point
};

struct CheckpointRecord {
  std::int64_t iteration = 0;  // the training iteration whose state it holds
  double stall_seconds = 0;    // the loop blocked for it: snapshot, back-pressure, wait before the
                               // update; sync: gather + write + commit
  double gather_seconds =
      0;  // sync, Megatron's gathered optimizer: the DP gather before the write (inside the stall)
  double snapshot_seconds =
      0;  // the copy into the host pool (async: inside the stall; lazy: on the worker)
  double backpressure_seconds =
      0;  // waiting for the previous checkpoint's flush and commit (inside the stall)
  double ring_wait_seconds =
      0;  // ring pool: the snapshot copy waiting for free chunks (async: inside the stall)
  double time_to_durable_seconds = 0;  // due -> manifest committed
  double flush_seconds = 0;  // the writes (background for async/lazy; sync: the timed write)
  double flush_gib_s = 0;    // all processes' bytes / the slowest process's flush_seconds
  bool committed = false;
  CheckpointTimes times;
  // tiered: due -> this process's part in its memory tier (tiers.memory), due -> its part
  // complete in its node's local tier, and due -> every part of its clique complete beside it
  // (each the slowest process's); the bytes sent to peers and the bytes written into the local
  // tiers through their backend, own parts and replicas (all processes); the tiers holding it
  // complete ("memory", "local", "peers", "remote"; empty when none does).
  double tier_memory_seconds = 0;
  double tier_local_seconds = 0;
  double tier_replicated_seconds = 0;
  std::uint64_t interconnect_bytes = 0;
  std::uint64_t local_tier_bytes = 0;
  std::vector<std::string> tiers;
};

// tiered: the nodes and cliques the loop ran on ([tiers], resolved).
struct TierLayoutRecord {
  int processes_per_node = 0;
  int nodes = 0;
  int replicas = 0;       // F
  int clique_stride = 0;  // J, in processes
  int drain_every = 0;    // K
  std::string local_dir;  // tiers.local_dir as written ({node} unexpanded)
  bool memory = false;    // tiers.memory: each process's part also in its host memory
};

// The recovery after losing tiers.lost_nodes, every process's part from the nearest tier: after the
// loop, or by a restarted job.
struct RecoveryRecord {
  std::vector<std::int64_t> lost_nodes;
  std::int64_t iteration = -1;  // the training iteration restored
  double seconds = 0;  // from a barrier to the slowest process's part in place (before verifying)
  // Bytes by source, all processes: own memory tier, own node's local tier, a peer's over MPI, the
  // backend.
  std::uint64_t memory_bytes = 0, local_bytes = 0, peer_bytes = 0, remote_bytes = 0;
  // Processes whose part came from each source.
  int memory_parts = 0, local_parts = 0, peer_parts = 0, remote_parts = 0;
  // Of the parts from peers, those a peer sent from its memory tier's replicas (no read).
  int peer_parts_from_memory = 0;
  // From the barrier to the slowest process's part in place, among the processes whose part came
  // from each source (0 where none did).
  double memory_seconds = 0, local_seconds = 0, peer_seconds = 0, remote_seconds = 0;
  bool restarted = false;  // by a job of its own (--phase restore), not after the loop
};

struct TrainingSummary {
  std::string engine;
  std::vector<CheckpointRecord> checkpoints;
  std::vector<double> plain_iteration_seconds;  // compute + update, no checkpoint activity
  std::vector<double>
      flushing_iteration_seconds;  // compute + update while a flush ran (stalls excluded)
  std::vector<IterationTimes> iteration_times;  // every iteration, in order
  std::uint64_t host_pool_bytes = 0;            // the bound (0 for sync)
  std::uint64_t pool_high_water_bytes = 0;      // largest snapshot bytes held at once (any process)
  std::uint64_t pool_chunk_bytes =
      0;                // ring pool (smaller than a checkpoint): its chunk size; 0: whole
  int pool_chunks = 0;  // ring pool: its chunk count; 0: whole
  std::uint64_t gather_bytes =
      0;  // one checkpoint's DP gather: bytes between processes (all processes)
  std::uint64_t gather_local_bytes = 0;   // ... and copied between ranks inside a process
  std::int64_t committed_iteration = -1;  // newest committed checkpoint's training iteration
  std::string committed_dir;
  double loop_seconds = 0;  // the whole loop, drain included
  // The flushes' backend counters (an object store's requests by kind), summed over every
  // checkpoint and process; empty for backends that count nothing.
  std::map<std::string, std::uint64_t> counters;
  std::string error;  // first failure, with context ("" when none)
  bool interrupted = false;
  std::optional<TierLayoutRecord> tiers;   // tiered only
  std::optional<RecoveryRecord> recovery;  // tiered: after the loop (tiers.lost_nodes) or restarted

  // Medians over the committed checkpoints.
  double stall_seconds() const;
  double time_to_durable_seconds() const;
  double snapshot_seconds() const;
  double gather_seconds() const;
  double flush_gib_s() const;
  // median(flushing) / median(plain) - 1; nullopt without both kinds of iterations.
  std::optional<double> iteration_inflation() const;
};

nlohmann::json to_json(const TrainingSummary& summary);

}  // namespace ckpt::harness
