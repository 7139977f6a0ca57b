#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::harness {

// Turns one extent per shard (in file order, memory mirroring the file) into the extents a
// backend submits: consecutive extents merged while the merged extent, gaps included, stays
// within `coalesce_bytes` (0: no merging); then every extent split into pieces of at most
// `chunk_bytes` (0: no splitting), rounded down to a multiple of `granule` (direct I/O).
std::vector<backends::Extent> build_extents(std::vector<backends::Extent> shards,
                                            std::uint64_t coalesce_bytes, std::uint64_t chunk_bytes,
                                            std::uint64_t granule);

}  // namespace ckpt::harness
