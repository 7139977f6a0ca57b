#include "harness/memory/data_pattern.hpp"

#include <algorithm>
#include <cstring>

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

}  // namespace ckpt::harness
