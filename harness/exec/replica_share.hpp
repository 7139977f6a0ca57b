#pragma once

// The cooperative restore's second step: each replicated piece, read by one process, sent over
// MPI point to point to the other processes holding it, and copied to every rank of a process
// that holds it (replica_plans planned who reads what).

#include <cstdint>
#include <vector>

#include "harness/comm/comm.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/loadplan/replica_plans.hpp"

namespace ckpt::harness {

struct ShareCounts {
  std::uint64_t sent_bytes = 0;    // to other processes (the interconnect)
  std::uint64_t copied_bytes = 0;  // between ranks of this process
};

// Collective (every process with its own `shares`, in the one order replica_plans gives them):
// each piece goes from its reader's first place to each receiver's first place, in messages of at
// most `chunk_bytes` straight between the rank buffers (no other memory), then to the other places
// on each process. Blocking pairs taken in one order on every process cannot deadlock. Host memory
// only.
ShareCounts share_replicas(Comm& comm, const std::vector<ReplicaShare>& shares,
                           const ProcessBuffer& buffer, std::uint64_t chunk_bytes);

}  // namespace ckpt::harness
