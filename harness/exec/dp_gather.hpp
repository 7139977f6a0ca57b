#pragma once

// Megatron's distributed optimizer, gathered format (strategy.layout = "megatron",
// megatron_optimizer = "gathered"): before DP rank 0 of each (tp, pp, ep) group writes
// distrib_optim.pt, the other DP ranks' optimizer shards travel to it
// (megatron/core/optimizer/distrib_optimizer.py: get_parameter_state_dp_zero gathers each
// bucket onto DP rank 0's CPU memory with torch.distributed.gather over the DP group).
//
// Here each process fills only the shards its own modeled ranks hold; a DP rank 0's share of
// its group's other DP ranks (PlacedShard::holder) reaches its write buffer only through the
// gather: point-to-point messages between processes (MPI), a copy inside a process when both
// ranks live in one. The bytes move in chunks of kGatherChunkBytes through one host staging
// buffer, as Megatron's bucket-by-bucket gather bounds its CPU memory. Every process walks the
// transfers in one global order ((root, holder) ascending), so blocking sends and receives
// cannot deadlock.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "harness/comm/comm.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

inline constexpr std::uint64_t kGatherChunkBytes = 64ull << 20;

// What one gather moved (this process's part): bytes received from other processes, bytes copied
// between modeled ranks of this process.
struct GatherCounts {
  std::uint64_t received_bytes = 0;
  std::uint64_t local_bytes = 0;
};

// A run of bytes in a ProcessBuffer: part `plan` of it, at `offset` of that part.
struct DpGatherPiece {
  std::size_t plan = 0;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

class DpGather {
 public:
  DpGather() = default;
  // `write_plans` are this process's (plan_ranks of `mine`); `selected` every selected modeled
  // rank, `process` of `processes` as process_share splits them. Holders that are not selected
  // send nothing: their shards stay filled by the root itself (fill_held_only leaves them in).
  DpGather(const workloads::Layout& layout, const Case& c,
           const std::vector<std::int64_t>& selected, int process, int processes,
           const std::vector<RankPlan>& write_plans, const std::filesystem::path& dir);

  // Whether any transfer involves this process.
  bool active() const { return !transfers_.empty(); }
  // Bytes of the sources this process's held shards need (for the memory budget).
  std::uint64_t source_bytes() const { return ProcessBuffer::bytes_for(sources_); }

  // Allocates the sources in `space` and the host staging buffer, and fills the sources with their
  // deterministic bytes: what each DP rank generated before the checkpoint.
  void prepare(MemorySpace& space, DataPattern pattern);
  // The sources refilled with their bytes at training iteration `iteration` (the [training] loop's
  // update: each DP rank's shards change every iteration, training_key).
  void fill_sources(DataPattern pattern, std::int64_t iteration);
  // The plans with every shard the gather delivers removed (what the process fills itself).
  std::vector<RankPlan> fill_held_only(const std::vector<RankPlan>& write_plans) const;

  // Moves every transfer of this process into `write_buffer` (the buffer of the write plans it
  // was built with). Blocking; every process of the run calls it (collective in effect).
  GatherCounts run(Comm& comm, ProcessBuffer& write_buffer);

 private:
  struct Transfer {
    std::int64_t root = 0, holder = 0;
    int from = 0, to = 0;               // processes
    std::vector<DpGatherPiece> source;  // in the source buffer (from == this process)
    std::vector<DpGatherPiece> target;  // in the write buffer (to == this process)
    std::uint64_t bytes = 0;
  };
  std::vector<Transfer> transfers_;
  std::vector<RankPlan> sources_;  // one per held (holder, root) pair this process sends from
  ProcessBuffer source_buffer_;
  std::vector<std::byte> stage_;  // one chunk
  std::vector<std::int64_t> selected_;
};

}  // namespace ckpt::harness
