#pragma once

// The host pool when engine.host_pool_bytes is below one process's checkpoint (DataStates'
// ring): `slots` chunks of chunk_bytes used as a FIFO. The copy side fills the next chunk in
// ring order, waiting while that chunk still holds bytes not yet written; the flush side writes
// chunks in the order they were filled and frees them. Pinned when the state is in device memory
// (the device->host copier's slots), page-aligned host memory otherwise. Bytes held at once never
// exceed slots * chunk_bytes <= the pool's bound.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/backend.hpp"
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
  // Flush side (one thread): waits for the oldest filled chunk and returns its memory; nullopt
  // once the ring was closed.
  std::optional<backends::MemoryView> front();
  // Frees the chunk front() returned.
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
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::uint64_t> held_;        // bytes in each slot
  std::uint64_t pushed_ = 0, popped_ = 0;  // chunks handed over and freed since reset()
  std::uint64_t in_use_ = 0, high_water_ = 0;
  double copy_wait_seconds_ = 0;
  bool closed_ = false;
};

}  // namespace ckpt::harness
