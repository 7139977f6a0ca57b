#pragma once

// How a flush moves a snapshot from the host pool through the backend, by the one executor: from a
// whole pool, one Backend::write per modeled rank (execute_plans, as the sync path); through a
// ring, each modeled rank's files kept open (Opening::kept_open) while the ring's chunks of its
// plan are written in order, one transfer a chunk. The ring's copy side is fill_ring.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/engine/chunk_ring.hpp"
#include "harness/memory/staging.hpp"

namespace ckpt::harness {

struct FlushWrites {
  std::uint64_t bytes = 0;
  std::string error;  // "<what>: rank R: <error>", "" when every write succeeded
  std::map<std::string, std::uint64_t> counters;  // the backend's (Backend::counters), summed
};

// What a flush writes: per modeled rank, its plan (paths in the checkpoint's directory) and
// where its bytes lie.
struct FlushTarget {
  std::string what;  // "checkpoint of iteration 7 (<dir>)", for errors
  std::vector<backends::IoPlan> plans;
  std::vector<std::int64_t> ranks;
  std::vector<backends::MemoryView> memory;    // whole pool: each plan's bytes in it
  std::vector<std::vector<StagedPart>> parts;  // ring: each plan cut into chunks (split_plan)
};

FlushWrites write_whole(backends::Backend& backend, const FlushTarget& target);

// Writes the chunks as the ring hands them over; an error closes the ring (the copy side stops).
FlushWrites write_through_ring(backends::Backend& backend, ChunkRing& ring,
                               const FlushTarget& target);

// The copy side: pushes every plan's chunks, plan by plan, from state offsets bases[r] + part
// offset. `midway` (may be empty) runs once after half of the chunks (a test hook). false when
// the ring was closed first. A failed copy throws (the caller closes the ring).
bool fill_ring(ChunkRing& ring, const std::vector<std::vector<StagedPart>>& parts,
               const std::vector<std::uint64_t>& bases, const std::function<void()>& midway = {});

}  // namespace ckpt::harness
