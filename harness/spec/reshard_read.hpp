#pragma once

#include <string_view>

namespace ckpt::harness {

// restore.read: exact byte ranges, or every stored item an overlap touches read whole and then
// narrowed (DCP's file reader). Its own header so that the case can hold it.
enum class ReshardRead { exact, whole_items };

// restore.replicas: what a same-layout restore gives the DP replicas. written: each rank reads
// only what it wrote (DP rank 0 alone the replicated state); read: each rank also reads the state
// it holds replicated across DP from DP rank 0's files, every rank its own copy; cooperative: as
// read, but each stored piece read once by one of the processes holding it, which sends it to the
// others over MPI (DCP's cooperative load planner).
enum class ReplicaRead { written, read, cooperative };
std::string_view replica_read_name(ReplicaRead read);

}  // namespace ckpt::harness
