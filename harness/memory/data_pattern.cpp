#include "harness/memory/data_pattern.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>

#include "harness/memory/pattern_dispatch.hpp"
#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness {

namespace {

// The pattern is a template argument so that the loops carry no per-word switch.
template <DataPattern P>
void fill_words(std::byte* data, std::uint64_t bytes, std::uint64_t key) {
  const std::uint64_t words = bytes / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t w = pattern::pattern_word(P, key, i);
    std::memcpy(data + 8 * i, &w, 8);
  }
  if (bytes % 8 != 0) {
    const std::uint64_t w = pattern::pattern_word(P, key, words);
    std::memcpy(data + 8 * words, &w, bytes % 8);
  }
}

template <DataPattern P>
std::optional<std::uint64_t> mismatch_in(const std::byte* data, std::uint64_t bytes, std::uint64_t key) {
  const std::uint64_t words = (bytes + 7) / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t expected = pattern::pattern_word(P, key, i);
    const std::uint64_t n = std::min<std::uint64_t>(8, bytes - 8 * i);
    std::uint64_t found = 0;
    if (n == 8) {
      std::memcpy(&found, data + 8 * i, 8);  // one load: a variable-length memcpy is a call
    } else {
      std::memcpy(&found, data + 8 * i, n);
    }
    const std::uint64_t b = pattern::first_differing_byte(found, expected, n);
    if (b < 8) return 8 * i + b;
  }
  return std::nullopt;
}

}  // namespace

void fill_pattern(std::byte* data, std::uint64_t bytes, DataPattern pattern, std::uint64_t key) {
  return with_pattern(pattern, [&](auto p) { return fill_words<decltype(p)::value>(data, bytes, key); });
}

std::optional<std::uint64_t> first_mismatch(const std::byte* data, std::uint64_t bytes, DataPattern pattern,
                                            std::uint64_t key) {
  return with_pattern(pattern, [&](auto p) { return mismatch_in<decltype(p)::value>(data, bytes, key); });
}

std::uint8_t expected_byte(DataPattern pattern, std::uint64_t key, std::uint64_t offset) {
  return pattern::pattern_byte(pattern, key, offset);
}

Checksum64::Checksum64(std::uint64_t total_bytes) : h_(0x84222325cbf29ce4ULL ^ total_bytes) {}

void Checksum64::update(const std::byte* data, std::uint64_t bytes) {
  if (has_tail_) throw std::logic_error("Checksum64::update after a piece that was not a multiple of 8 bytes");
  std::uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, data + i, 8);
    h_ = (std::rotl(h_, 29) ^ w) * 0x9fb21c651e98df25ULL;
  }
  if (i < bytes) {
    std::memcpy(&tail_, data + i, bytes - i);
    has_tail_ = true;
  }
}

std::uint64_t Checksum64::value() const { return pattern::splitmix64(h_ ^ tail_); }

std::uint64_t checksum64(const std::byte* data, std::uint64_t bytes) {
  Checksum64 sum(bytes);
  sum.update(data, bytes);
  return sum.value();
}

}  // namespace ckpt::harness
