#include "harness/engine/memory_tier.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace ckpt::harness {

MemoryTier::MemoryTier(std::uint64_t bytes, int replicas, std::uint64_t replica_bytes)
    : bytes_(bytes),
      replica_bytes_(replica_bytes),
      memory_(bytes + static_cast<std::uint64_t>(replicas) * replica_bytes),
      held_(static_cast<std::size_t>(replicas)) {}

void MemoryTier::store(std::span<const std::byte> part) {
  if (part.size() > bytes_) {
    throw std::invalid_argument(fmt::format(
        "memory tier: a part of {} bytes does not fit its {} bytes", part.size(), bytes_));
  }
  iteration_.store(-1);
  if (!part.empty()) std::memcpy(memory_.data(), part.data(), part.size());
  size_ = part.size();
  for (Held& h : held_) h = {};
}

std::span<std::byte> MemoryTier::replica(int slot, int process, std::uint64_t bytes) {
  if (slot < 0 || slot >= replicas() || bytes > replica_bytes_) {
    throw std::invalid_argument(
        fmt::format("memory tier: replica {} of {} bytes does not fit its {} slots of {} bytes",
                    slot, bytes, replicas(), replica_bytes_));
  }
  held_[static_cast<std::size_t>(slot)] = {process, bytes};
  return {memory_.data() + bytes_ + static_cast<std::uint64_t>(slot) * replica_bytes_, bytes};
}

std::optional<std::span<const std::byte>> MemoryTier::replica_of(int process) const {
  for (std::size_t slot = 0; slot < held_.size(); ++slot) {
    if (held_[slot].process == process)
      return std::span<const std::byte>(memory_.data() + bytes_ + slot * replica_bytes_,
                                        held_[slot].bytes);
  }
  return std::nullopt;
}

}  // namespace ckpt::harness
