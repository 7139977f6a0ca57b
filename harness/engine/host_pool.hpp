#pragma once

// The bounded host pool async and lazy snapshot into (engine.host_pool_bytes; 0: one process's
// state). Holding a whole checkpoint, it is one region, pinned when the state is in device
// memory (the device->host copier's slot), plain page-aligned host memory otherwise; at most one
// snapshot lives in it at a time: the next checkpoint waits for the previous flush
// (back-pressure). Smaller than a checkpoint, it is a ring of chunks (ChunkRing) that the
// snapshot fills while the flush writes and frees them. Either way it never holds more bytes
// than its bound.

#include <cstdint>
#include <memory>

#include "backends/backend.hpp"
#include "harness/engine/chunk_ring.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

class HostPool {
 public:
  // `capacity` 0: the state's size. Below the state's size: a ring (throws std::invalid_argument
  // below kMinRingBytes).
  HostPool(const Buffer& state, std::uint64_t capacity);

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t high_water() const;
  // Bytes the pool allocates for a state of `state_bytes` under the bound `capacity` (0: the
  // state's).
  static std::uint64_t allocation(std::uint64_t capacity, std::uint64_t state_bytes);

  // The ring when the pool is smaller than the state; nullptr when it holds a whole snapshot.
  ChunkRing* ring() const { return ring_.get(); }

  // Whole pool only. Memory of the snapshot: the state's layout, state byte b at pool byte b.
  backends::MemoryView view() const;
  // A snapshot begins: the whole state's bytes of the pool are held until release() (ring: every
  // chunk freed).
  void hold();
  // Whole pool: copies state bytes [offset, offset + bytes) into the pool at the same offset
  // (device state: whole copies only). One copy at a time (any thread); the state must not change
  // meanwhile.
  void copy_in(std::uint64_t offset, std::uint64_t bytes) const;
  // The snapshot was flushed and committed: its bytes are free again.
  void release() { in_use_ = 0; }

 private:
  const Buffer& state_;
  std::uint64_t capacity_ = 0;
  std::uint64_t in_use_ = 0, high_water_ = 0;
  HostBuffer host_;                       // host state
  std::unique_ptr<DeviceCopier> copier_;  // device state: one pinned slot
  std::unique_ptr<ChunkRing> ring_;
};

}  // namespace ckpt::harness
