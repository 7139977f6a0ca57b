#pragma once

// The tiered engine's host-memory tier (tiers.memory): this process's part of the newest
// checkpoint the tiers hold complete, kept in its own host memory, as Gemini, CheckFreq and
// ByteCheckpoint keep in-memory copies. A process that survives a failure restores from it without
// any read. The flush thread copies each snapshot in first; the copy counts only once every node's
// local tier committed that checkpoint (complete()), so it never names a checkpoint the tiers below
// it do not hold. The memory is allocated and touched once, up front.

#include <atomic>
#include <cstdint>
#include <span>

#include "harness/memory/host_buffer.hpp"

namespace ckpt::harness {

class MemoryTier {
 public:
  // `bytes`: the largest part it will hold (throws std::runtime_error when it cannot be had).
  explicit MemoryTier(std::uint64_t bytes);

  // Flush thread: holds `part` (at most capacity() bytes; std::invalid_argument otherwise) and,
  // until complete(), no complete checkpoint.
  void store(std::span<const std::byte> part);
  // The loop's thread, after the flush that stored the part was collected: it is the checkpoint of
  // `iteration`, complete in every tier below.
  void complete(std::int64_t iteration) { iteration_.store(iteration); }
  // The training iteration whose part it holds complete; -1: none.
  std::int64_t iteration() const { return iteration_.load(); }
  // The part it holds (as stored).
  std::span<const std::byte> part() const { return {memory_.data(), size_}; }
  std::uint64_t capacity() const { return memory_.size(); }

 private:
  HostBuffer memory_;
  std::uint64_t size_ = 0;
  std::atomic<std::int64_t> iteration_{-1};
};

}  // namespace ckpt::harness
