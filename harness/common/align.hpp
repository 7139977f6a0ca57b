#pragma once

// Rounding byte offsets up to an alignment (a page, O_DIRECT's block, a buffer's granule),
// declared once for every planner and loader.

#include <cstdint>

namespace ckpt::harness {

// `value` rounded up to a multiple of `alignment` (> 0).
constexpr std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace ckpt::harness
