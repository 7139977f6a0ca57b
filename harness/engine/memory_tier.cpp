#include "harness/engine/memory_tier.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace ckpt::harness {

MemoryTier::MemoryTier(std::uint64_t bytes) : memory_(bytes) {}

void MemoryTier::store(std::span<const std::byte> part) {
  if (part.size() > memory_.size()) {
    throw std::invalid_argument(fmt::format(
        "memory tier: a part of {} bytes does not fit its {} bytes", part.size(), memory_.size()));
  }
  iteration_.store(-1);
  if (!part.empty()) std::memcpy(memory_.data(), part.data(), part.size());
  size_ = part.size();
}

}  // namespace ckpt::harness
