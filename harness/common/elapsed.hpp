#pragma once

// The harness's wall clock and the binary unit its bandwidths are given in, declared once.

#include <chrono>
#include <cstdint>

namespace ckpt::harness {

using Clock = std::chrono::steady_clock;

// Seconds from `start` to now.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;            // bytes in a GiB, for GiB/s
inline constexpr std::uint64_t kGiBBytes = std::uint64_t{1} << 30;  // the same, for byte counts

}  // namespace ckpt::harness
