#pragma once

// The bounded host pool async and lazy snapshot into: one region of engine.host_pool_bytes
// (at least one process's state), pinned when the state is in device memory (the device->host
// copier's slot), plain page-aligned host memory otherwise. At most one snapshot lives in it at
// a time: the next checkpoint waits for the previous flush (back-pressure), so the pool never
// holds more than one process's checkpoint.

#include <cstdint>
#include <memory>

#include "backends/backend.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

class HostPool {
 public:
  // Throws std::invalid_argument when `capacity` (0: the state's size) is below the state's size.
  HostPool(const Buffer& state, std::uint64_t capacity);

  std::uint64_t capacity() const { return capacity_; }
  std::uint64_t high_water() const { return high_water_; }
  // Memory of the snapshot: the state's layout, state byte b at pool byte b.
  backends::MemoryView view() const;

  // A snapshot begins: the whole state's bytes of the pool are held until release().
  void hold();
  // Copies state bytes [offset, offset + bytes) into the pool at the same offset (device state:
  // whole copies only). One copy at a time (any thread); the state must not change meanwhile.
  void copy_in(std::uint64_t offset, std::uint64_t bytes) const;
  // The snapshot was flushed and committed: its bytes are free again.
  void release() { in_use_ = 0; }

 private:
  const Buffer& state_;
  std::uint64_t capacity_ = 0;
  std::uint64_t in_use_ = 0, high_water_ = 0;
  HostBuffer host_;                        // host state
  std::unique_ptr<DeviceCopier> copier_;  // device state: one pinned slot
};

}  // namespace ckpt::harness
