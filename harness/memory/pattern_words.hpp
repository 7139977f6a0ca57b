#pragma once

// The deterministic shard contents as inline functions that host code, CUDA kernels and Kokkos
// kernels share, so that every memory space fills and verifies byte-identical data: a
// checkpoint written from device memory restores and verifies into host memory and back.
// The key names a tensor (seed, state, tensor name); byte g of the tensor's global row-major
// bytes is byte (g % 8) (little-endian) of pattern_word(pattern, key, g / 8). A shard of any
// slicing holds those bytes at its global positions, so any layout regenerates and verifies it.

#include <cstdint>

#include "harness/memory/data_pattern_kind.hpp"
#include "harness/memory/trained_words.hpp"  // defines CKPT_HOST_DEVICE

namespace ckpt::harness::pattern {

CKPT_HOST_DEVICE inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Trailing one bits of an 8-bit value (0..8); std::countr_one is not available in device code.
CKPT_HOST_DEVICE inline int trailing_ones8(unsigned bits) {
  int n = 0;
  while (n < 8 && ((bits >> n) & 1u) != 0) ++n;
  return n;
}

// Four bf16 values from 64 random bits: random sign and 7-bit mantissa, exponent 2^-6 with
// probability 1/2, 2^-7 with 1/4, ... (the magnitudes of weights initialised near 0.02).
CKPT_HOST_DEVICE inline std::uint64_t bf16_word(std::uint64_t random) {
  std::uint64_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const auto r = static_cast<std::uint16_t>(random >> (16 * i));
    const auto sign = static_cast<std::uint16_t>(r & 0x8000u);
    const auto mantissa = static_cast<std::uint16_t>(r & 0x7fu);
    const int depth = trailing_ones8((static_cast<unsigned>(r) >> 7) & 0xffu);
    const auto exponent = static_cast<std::uint16_t>(121 - depth);
    out |= static_cast<std::uint64_t>(sign | (exponent << 7) | mantissa) << (16 * i);
  }
  return out;
}

// The 64 random bits behind word `index` of the tensor with seed `key`.
CKPT_HOST_DEVICE inline std::uint64_t word_bits(std::uint64_t key, std::uint64_t index) {
  return splitmix64(key ^ (index * 0x2545f4914f6cdd1dULL));
}

// Word `index` (global bytes 8 × index .. 8 × index + 7) of the tensor with seed `key`.
CKPT_HOST_DEVICE inline std::uint64_t pattern_word(DataPattern pattern, std::uint64_t key,
                                                   std::uint64_t index) {
  switch (pattern) {
    case DataPattern::zeros:
      return 0;
    case DataPattern::bf16:
      return bf16_word(word_bits(key, index));
    case DataPattern::trained:
      return trained_word(key, word_bits(key, index));
    case DataPattern::random:
      break;
  }
  return word_bits(key, index);
}

// Global byte `offset` of the tensor with seed `key`.
CKPT_HOST_DEVICE inline std::uint8_t pattern_byte(DataPattern pattern, std::uint64_t key,
                                                  std::uint64_t offset) {
  return static_cast<std::uint8_t>(pattern_word(pattern, key, offset / 8) >> (8 * (offset % 8)));
}

// The 8 bytes at global byte `offset` (any alignment), little-endian: two words shifted
// together when `offset` is not a multiple of 8.
CKPT_HOST_DEVICE inline std::uint64_t pattern_word_at(DataPattern pattern, std::uint64_t key,
                                                      std::uint64_t offset) {
  const std::uint64_t shift = 8 * (offset % 8);
  const std::uint64_t low = pattern_word(pattern, key, offset / 8);
  if (shift == 0) return low;
  return (low >> shift) | (pattern_word(pattern, key, offset / 8 + 1) << (64 - shift));
}

// Offset within the word of the first byte where `found` differs from `expected` (they differ),
// looking only at the first `valid` bytes (8 for a whole word); 8 when those bytes agree.
CKPT_HOST_DEVICE inline std::uint64_t first_differing_byte(std::uint64_t found,
                                                           std::uint64_t expected,
                                                           std::uint64_t valid) {
  const std::uint64_t mask = valid >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * valid)) - 1;
  const std::uint64_t diff = (found ^ expected) & mask;
  if (diff == 0) return 8;
  for (std::uint64_t b = 0; b < 8; ++b) {
    if (((diff >> (8 * b)) & 0xffu) != 0) return b;
  }
  return 8;
}

}  // namespace ckpt::harness::pattern
