#pragma once

// The campaign's [training] and [engine] tables: the emulated training loop and the checkpoint
// engine that runs inside it (harness/engine/README section in the top README).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::harness {

// When and from where a checkpoint's IoPlan runs. sync: inline, the loop stops for write + sync
// + commit. async: the loop stops only to copy the state into the host pool; a background
// thread flushes and the commit follows. lazy: the copy itself runs in the background during the
// next iteration's compute; the loop waits only before that iteration's update. tiered: as async,
// but the flush writes the snapshot to the node-local tier, replicates it to the clique's peers
// and drains it to the backend (the remote tier) every tiers.drain_every-th checkpoint only.
enum class EngineKind { sync, async, lazy, tiered };
// What the compute part of an iteration does: sleep, spin a core, or (needs a GPU) a kernel.
enum class ComputeKind { sleep, spin, gpu };

struct TrainingSpec {
  int iterations = 0;              // 0: no training loop (bandwidth only, the harness's iterations)
  double iteration_seconds = 1.0;  // compute + update per iteration
  double update_fraction = 0.2;    // the update's share of iteration_seconds (the tail)
  int checkpoint_every = 1;        // a checkpoint is due after every checkpoint_every-th iteration
  ComputeKind compute = ComputeKind::sleep;

  bool enabled() const { return iterations > 0; }
};

// [tiers]: how processes map to (emulated) nodes and what the tiered engine keeps where. Nodes
// are blocks of processes_per_node consecutive processes; a process's part (its whole checkpoint
// buffer) is replicated to the other members of its clique {p, p+J, ..., p+(F-1)J} (NVIDIA's
// resiliency library's cliques, J and F in processes), each on another node.
// tiers.local_backend: the backends a node-local tier can be written through (file backends that
// stream a part through a file kept open from a flush thread), and the default.
inline constexpr std::string_view kLocalTierBackends[] = {"posix", "uring"};
inline constexpr const char* kDefaultLocalTierBackend = "posix";

struct TierSpec {
  int processes_per_node = 0;     // 0: the MPI launch's (OMPI_COMM_WORLD_LOCAL_SIZE, ...)
  std::string local_dir;          // the node-local tier; "{node}" stands for the node's number
  std::uint64_t local_bytes = 0;  // a node's local capacity; 0: the file system's free space
  int replicas = 2;               // F: copies of each part in the clique, the own one included
  int clique_stride = 0;          // J: processes between clique members; 0: processes_per_node
  int drain_every = 1;            // K: every K-th checkpoint also goes to the backend
  std::uint64_t chunk_bytes = std::uint64_t{4} << 20;  // one message of the peer exchange
  std::vector<std::int64_t> lost_nodes;  // lost after the loop: recovered from the tiers
  // Each process also keeps its part of the newest complete checkpoint in its host memory, the
  // first tier: a process that survives a loss restores from it.
  bool memory = false;
  // The backend of the node-local tier's part files (posix or uring).
  std::string local_backend = kDefaultLocalTierBackend;
};

struct EngineSpec {
  EngineKind kind = EngineKind::sync;
  std::uint64_t host_pool_bytes = 0;  // 0: one process's checkpoint (async, lazy, tiered)
  TierSpec tiers;                     // tiered (and the recover phase)
};

std::string_view engine_name(EngineKind kind);
std::optional<EngineKind> parse_engine(std::string_view name);
std::string_view compute_name(ComputeKind kind);
std::optional<ComputeKind> parse_compute(std::string_view name);

}  // namespace ckpt::harness
