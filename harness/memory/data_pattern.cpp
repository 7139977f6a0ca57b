#include "harness/memory/data_pattern.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "harness/memory/pattern_dispatch.hpp"
#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness {

namespace {

// The words of a run from global byte `global` on, in order. Word-aligned runs (every
// whole-slice shard of a tensor whose rows are multiples of 8 bytes) take one pattern word per
// output word; others shift two neighbours together, carrying one over, so that they too compute
// one pattern word per output word. The pattern is a template argument so that the loops carry
// no per-word switch.
// The trained pattern's exponents as a 128-entry table of the tensor's model: the values
// ModelPick computes, looked up instead of computed for every value (the host's fill is then
// several times faster; device kernels compute them).
class TablePick {
 public:
  explicit TablePick(std::uint64_t key) {
    const pattern::ModelPick model{
        pattern::value_model(static_cast<pattern::ContentState>(key & 3u))};
    for (unsigned s = 0; s < exponent_.size(); ++s)
      exponent_[s] = static_cast<std::uint8_t>(model(s));
  }
  unsigned operator()(unsigned selector) const { return exponent_[selector]; }

 private:
  std::array<std::uint8_t, 128> exponent_{};
};

template <DataPattern P, bool Aligned>
class RunWords {
 public:
  RunWords(std::uint64_t key, std::uint64_t global)
      : key_(key), index_(global / 8), shift_(8 * (global % 8)), pick_(key), low_(word(index_)) {}

  std::uint64_t next() {
    if constexpr (Aligned) {
      return word(index_++);
    } else {
      const std::uint64_t high = word(++index_);
      const std::uint64_t w = (low_ >> shift_) | (high << (64 - shift_));
      low_ = high;
      return w;
    }
  }

 private:
  std::uint64_t word(std::uint64_t index) const {
    if constexpr (P == DataPattern::trained)
      return pattern::trained_word(key_, pattern::word_bits(key_, index), pick_);
    return pattern::pattern_word(P, key_, index);
  }

  std::uint64_t key_;
  std::uint64_t index_;
  std::uint64_t shift_;  // 8..56 when !Aligned
  TablePick pick_;       // the trained pattern's only
  std::uint64_t low_;
};

template <DataPattern P, bool Aligned>
void fill_words(std::byte* data, std::uint64_t bytes, std::uint64_t key, std::uint64_t global) {
  RunWords<P, Aligned> run(key, global);
  const std::uint64_t words = bytes / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t w = run.next();
    std::memcpy(data + 8 * i, &w, 8);
  }
  if (bytes % 8 != 0) {
    const std::uint64_t w = run.next();
    std::memcpy(data + 8 * words, &w, bytes % 8);
  }
}

template <DataPattern P, bool Aligned>
std::optional<std::uint64_t> mismatch_in(const std::byte* data, std::uint64_t bytes,
                                         std::uint64_t key, std::uint64_t global) {
  RunWords<P, Aligned> run(key, global);
  const std::uint64_t words = (bytes + 7) / 8;
  for (std::uint64_t i = 0; i < words; ++i) {
    const std::uint64_t expected = run.next();
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

void fill_pattern(std::byte* data, std::uint64_t bytes, DataPattern pattern, std::uint64_t key,
                  std::uint64_t global_offset) {
  return with_pattern(pattern, [&](auto p) {
    if (global_offset % 8 == 0)
      return fill_words<decltype(p)::value, true>(data, bytes, key, global_offset);
    return fill_words<decltype(p)::value, false>(data, bytes, key, global_offset);
  });
}

std::optional<std::uint64_t> first_mismatch(const std::byte* data, std::uint64_t bytes,
                                            DataPattern pattern, std::uint64_t key,
                                            std::uint64_t global_offset) {
  return with_pattern(pattern, [&](auto p) {
    if (global_offset % 8 == 0)
      return mismatch_in<decltype(p)::value, true>(data, bytes, key, global_offset);
    return mismatch_in<decltype(p)::value, false>(data, bytes, key, global_offset);
  });
}

std::uint8_t expected_byte(DataPattern pattern, std::uint64_t key, std::uint64_t offset) {
  return pattern::pattern_byte(pattern, key, offset);
}

}  // namespace ckpt::harness
