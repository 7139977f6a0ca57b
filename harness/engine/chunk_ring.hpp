#pragma once

// The host pool when engine.host_pool_bytes is below one process's checkpoint (DataStates'
// ring): `slots` chunks of chunk_bytes used as a FIFO. The copy side fills the next chunk in
// ring order, waiting while that chunk still holds bytes not yet written; the flush side writes
// chunks in the order they were filled and frees them. Pinned when the state is in device memory
// (the device->host copier's slots), page-aligned host memory otherwise. Bytes held at once never
// exceed slots * chunk_bytes <= the pool's bound.

#include <cstdint>
#include <memory>
#include <optional>

#include "backends/backend.hpp"
#include "harness/common/bounded_slots.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

struct RingGeometry {
  int slots = 0;
  std::uint64_t chunk_bytes = 0;  // a multiple of 4096, so chunk cuts keep O_DIRECT alignment

  std::uint64_t bytes() const { return static_cast<std::uint64_t>(slots) * chunk_bytes; }
};

// The smallest pool a ring can use: two chunks of 4096 bytes.
inline constexpr std::uint64_t kMinRingBytes = 2 * HostBuffer::kAlignment;

// Chunks of at most 64 MiB, at least two of them, within `capacity` (>= kMinRingBytes).
RingGeometry ring_geometry(std::uint64_t capacity);

class ChunkRing {
 public:
  // Throws std::invalid_argument when capacity < kMinRingBytes.
  ChunkRing(const Buffer& state, std::uint64_t capacity);
  ChunkRing(const ChunkRing&) = delete;
  ChunkRing& operator=(const ChunkRing&) = delete;

  const RingGeometry& geometry() const { return geometry_; }
  std::uint64_t high_water() const;  // most bytes held at once; thread-safe
  double copy_wait_seconds()
      const;  // the copy side's waits for a free chunk since reset(); thread-safe

  // Copy side (one thread): waits for the next chunk in ring order to be free, copies state bytes
  // [offset, offset + bytes) into it (bytes <= chunk_bytes) and hands it to the flush side.
  // false: the ring was closed (nothing copied). Throws std::runtime_error for a failed device
  // copy.
  bool push(std::uint64_t offset, std::uint64_t bytes);
  // Flush side (one thread): waits for the oldest filled chunk and returns its memory (the same
  // chunk again until pop()); nullopt once the ring was closed.
  std::optional<backends::MemoryView> front();
  // Frees the chunk front() returned. Throws std::logic_error when front() returned none.
  void pop();
  // Either side failed: wakes and ends both (push returns false, front nullopt) until reset().
  void close();
  // A new snapshot begins: every chunk free. Precondition: neither side is running.
  void reset();

 private:
  backends::MemoryView chunk(int slot) const;

  const Buffer& state_;
  RingGeometry geometry_;
  HostBuffer host_;                       // host state
  std::unique_ptr<DeviceCopier> copier_;  // device state: one pinned slot per chunk
  // Held units and payloads are the bytes in each chunk.
  BoundedSlots<std::uint64_t> slots_;
  std::optional<BoundedSlots<std::uint64_t>::Filled> front_;  // the flush side's; pop() frees it
};

}  // namespace ckpt::harness
