#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

// A contiguous part of one extent, handed to one worker.
struct Piece {
  std::size_t file = 0;  // index into IoPlan::files
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  std::uint64_t length = 0;
};

// Splits the plan's extents into at most `workers` lists of nearly equal bytes. Laying the
// extents end to end in plan order, list k holds bytes [k·share, (k+1)·share), where share is
// ceil(bytes / workers) rounded up to `granule` (a power of two): each list keeps plan order
// (sequential access per worker), and an extent is cut only at a multiple of `granule` from
// its start, so aligned O_DIRECT extents give aligned pieces. Zero-length extents are dropped;
// a plan of zero bytes gives no list. Preconditions: workers >= 1, granule >= 1.
std::vector<std::vector<Piece>> split_by_bytes(const IoPlan& plan, std::size_t workers,
                                               std::uint64_t granule);

}  // namespace ckpt::backends::file_common
