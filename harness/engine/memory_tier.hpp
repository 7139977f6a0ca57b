#pragma once

// The tiered engine's host-memory tier (tiers.memory): this process's part of the newest
// checkpoint the tiers hold complete, kept in its own host memory, as Gemini, CheckFreq and
// ByteCheckpoint keep in-memory copies, and with F > 1 the parts of its clique's peers it received
// for that checkpoint (Gemini's copies in the peers' memory). A process that survives a failure
// restores from it without any read, and serves a lost peer's part from it without any read. The
// flush thread copies each snapshot (and each received replica) in first; the copies count only
// once every node's local tier committed that checkpoint (complete()), so they never name a
// checkpoint the tiers below them do not hold. The memory is allocated and touched once, up front.

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "harness/memory/host_buffer.hpp"

namespace ckpt::harness {

class MemoryTier {
 public:
  // `bytes`: the largest own part it will hold; `replicas` peers' parts of at most `replica_bytes`
  // each besides (F - 1 with F > 1). Throws std::runtime_error when the memory cannot be had.
  explicit MemoryTier(std::uint64_t bytes, int replicas = 0, std::uint64_t replica_bytes = 0);

  // Flush thread: holds `part` (at most capacity() bytes; std::invalid_argument otherwise), no
  // replica, and until complete(), no complete checkpoint.
  void store(std::span<const std::byte> part);
  // Flush thread, after store(): the memory replica `slot` (0 .. replicas() - 1) of process
  // `process`'s part, `bytes` long, which the caller fills (std::invalid_argument when it does not
  // fit).
  std::span<std::byte> replica(int slot, int process, std::uint64_t bytes);
  // The loop's thread, after the flush that stored the part was collected: it is the checkpoint of
  // `iteration`, complete in every tier below.
  void complete(std::int64_t iteration) { iteration_.store(iteration); }
  // The training iteration whose parts it holds complete; -1: none.
  std::int64_t iteration() const { return iteration_.load(); }
  // The own part it holds (as stored).
  std::span<const std::byte> part() const { return {memory_.data(), size_}; }
  // Process `process`'s part among the replicas it holds; nullopt when it holds none of it.
  std::optional<std::span<const std::byte>> replica_of(int process) const;
  std::uint64_t capacity() const { return bytes_; }
  int replicas() const { return static_cast<int>(held_.size()); }

 private:
  struct Held {
    int process = -1;  // -1: none
    std::uint64_t bytes = 0;
  };

  std::uint64_t bytes_, replica_bytes_;
  HostBuffer memory_;  // the own part, then each replica's slot
  std::uint64_t size_ = 0;
  std::vector<Held> held_;
  std::atomic<std::int64_t> iteration_{-1};
};

}  // namespace ckpt::harness
