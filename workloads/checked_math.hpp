#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "workloads/spec_error.hpp"

namespace ckpt::workloads {

inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// a × b and a + b where `a` comes from the setting `key`: on signed 64-bit overflow, a
// SpecError naming the key and the largest value of it that still fits (for `what`, e.g.
// "the checkpoint's size in bytes").
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* key, const char* what) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    const std::int64_t largest = b == 0 ? kInt64Max : kInt64Max / (b < 0 ? -b : b);
    throw SpecError(key, std::string(key) + " = " + std::to_string(a) + " is too large: " + what +
                             " overflows 64-bit arithmetic; the largest value allowed here is " +
                             std::to_string(largest));
  }
  return product;
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* key, const char* what) {
  std::int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    const std::int64_t largest = b <= 0 ? kInt64Max : kInt64Max - b;
    throw SpecError(key, std::string(key) + " = " + std::to_string(a) + " is too large: " + what +
                             " overflows 64-bit arithmetic; the largest value allowed here is " +
                             std::to_string(largest));
  }
  return sum;
}

// Throws SpecError(key) unless value <= largest.
inline void require_at_most(std::int64_t value, std::int64_t largest, const char* key) {
  if (value > largest) {
    throw SpecError(key, std::string(key) + " = " + std::to_string(value) +
                             " exceeds the largest value allowed, " + std::to_string(largest));
  }
}

}  // namespace ckpt::workloads
