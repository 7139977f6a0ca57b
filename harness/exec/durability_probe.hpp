#pragma once

// The durability probe: how long an fsync of freshly written bytes takes in a directory, to tell
// storage that makes them durable from a cache that only says so (DurabilityProbe::too_fast).
#include <cstdint>
#include <filesystem>

#include "harness/results/integrity.hpp"

namespace ckpt::harness {

// Bytes the probe writes: enough that moving them at kMaxDurableGiBPerSecond takes 15 us, far
// above an fsync that moves nothing (about 1 us), and little enough to cost a few milliseconds.
inline constexpr std::uint64_t kDurabilityProbeBytes = 4u << 20;

// Writes kDurabilityProbeBytes of non-repeating bytes (no compression or deduplication shortens
// them) into a new file in `directory`, fsyncs it, then rewrites and fsyncs it again, and removes
// it; the faster fsync is kept. A failure (the directory missing or read-only, a call failing) is
// returned as not probed, with the call and its error in why_not; it never throws.
DurabilityProbe probe_durability(const std::filesystem::path& directory);

}  // namespace ckpt::harness
