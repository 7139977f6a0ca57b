#include "harness/memory/data_pattern.hpp"

#include <bit>
#include <cstring>

namespace ckpt::harness {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Four bf16 values from 64 random bits: random sign and 7-bit mantissa, exponent 2^-6 with
// probability 1/2, 2^-7 with 1/4, ... (the magnitudes of weights initialised near 0.02).
std::uint64_t bf16_word(std::uint64_t random) {
  std::uint64_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const auto r = static_cast<std::uint16_t>(random >> (16 * i));
    const auto sign = static_cast<std::uint16_t>(r & 0x8000u);
    const auto mantissa = static_cast<std::uint16_t>(r & 0x7fu);
    const int depth = std::countr_one(static_cast<unsigned>((r >> 7) & 0xffu));  // 0..8
    const auto exponent = static_cast<std::uint16_t>(121 - depth);
    out |= static_cast<std::uint64_t>(sign | (exponent << 7) | mantissa) << (16 * i);
  }
  return out;
}

std::uint64_t word_at(DataPattern pattern, std::uint64_t key, std::uint64_t index) {
  switch (pattern) {
    case DataPattern::zeros: return 0;
    case DataPattern::bf16: return bf16_word(splitmix64(key ^ (index * 0x2545f4914f6cdd1dULL)));
    case DataPattern::random: break;
  }
  return splitmix64(key ^ (index * 0x2545f4914f6cdd1dULL));
}

}  // namespace

void fill_pattern(std::byte* data, std::uint64_t bytes, DataPattern pattern, std::uint64_t key) {
  const std::uint64_t words = bytes / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t w = word_at(pattern, key, i);
    std::memcpy(data + 8 * i, &w, 8);
  }
  if (bytes % 8 != 0) {
    const std::uint64_t w = word_at(pattern, key, words);
    std::memcpy(data + 8 * words, &w, bytes % 8);
  }
}

std::optional<std::uint64_t> first_mismatch(const std::byte* data, std::uint64_t bytes, DataPattern pattern,
                                            std::uint64_t key) {
  const std::uint64_t words = (bytes + 7) / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t expected = word_at(pattern, key, i);
    const std::uint64_t n = std::min<std::uint64_t>(8, bytes - 8 * i);
    if (std::memcmp(data + 8 * i, &expected, n) == 0) continue;
    for (std::uint64_t b = 0; b < n; ++b) {
      if (static_cast<std::uint8_t>(data[8 * i + b]) != static_cast<std::uint8_t>(expected >> (8 * b))) {
        return 8 * i + b;
      }
    }
  }
  return std::nullopt;
}

std::uint8_t expected_byte(DataPattern pattern, std::uint64_t key, std::uint64_t offset) {
  return static_cast<std::uint8_t>(word_at(pattern, key, offset / 8) >> (8 * (offset % 8)));
}

std::uint64_t checksum64(const std::byte* data, std::uint64_t bytes) {
  std::uint64_t h = 0x84222325cbf29ce4ULL ^ bytes;
  std::uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = (std::rotl(h, 29) ^ w) * 0x9fb21c651e98df25ULL;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, data + i, bytes - i);
  return splitmix64(h ^ tail);
}

}  // namespace ckpt::harness
