#pragma once

// The words of data.pattern = "trained": bf16 and fp32 values whose sign, exponent and mantissa
// fields have the statistics of a trained model's checkpoint, so that a compressor sees the
// entropy it would see on real weights and optimizer states. Inline and CKPT_HOST_DEVICE like
// pattern::pattern_word (whose header includes this one): host, CUDA and Kokkos fills agree.
//
// What a tensor holds (its content code) travels in the low 4 bits of its data key: bits 0-1 the
// state (weight, fp32 master, Adam exp_avg, Adam exp_avg_sq), bits 2-3 the element format (bf16,
// fp32, or another format, which gets uniform random bytes). The planner sets them
// (shard_data_key); the iteration keys of the training loop keep them.
//
// Each value takes its own random bits: sign (uniform, or 0 for exp_avg_sq, which is never
// negative), mantissa (uniform: ZipNN, Hershcovitch et al. 2024, finds trained mantissas nearly
// incompressible; the measurement below finds 6.97 bits of entropy in bf16's 7) and a 7-bit
// selector that picks the exponent from the state's distribution: up to 16 bins below a top
// exponent, in 128ths.
//
// The distributions were measured by benchmarks/trained_content_stats.py: a 2-layer transformer
// (hidden 128, vocabulary 512) initialised with N(0, 0.02) and trained 200 steps with AdamW
// (lr 1e-3, betas 0.9/0.95, weight decay 0.1) on a random sparse Markov chain, loss 6.26 -> 1.87;
// each matrix's exponents counted relative to its most frequent exponent, averaged over the
// matrices by elements, quantised to 128ths. Exponent entropy of the models (per tensor in the
// measurement): weights and fp32 master 2.53 bits (2.50), exp_avg 2.94 (2.78), exp_avg_sq 2.29
// (1.97): the pooled shape is a little wider than one tensor's, so the content errs towards less
// compressible. The weights' 2.5 bits match ZipNN's figures for real BF16 models (an exponent
// entropy of 2.5-3 bits), where byte grouping saves about a third.

#include <cstdint>

#if defined(__CUDACC__)
#define CKPT_HOST_DEVICE __host__ __device__
#else
#define CKPT_HOST_DEVICE
#endif

namespace ckpt::harness::pattern {

// The content code: the low bits of a trained tensor's data key.
inline constexpr std::uint64_t kContentMask = 0xF;
enum class ContentState : unsigned { weight = 0, master = 1, exp_avg = 2, exp_avg_sq = 3 };
enum class ContentFormat : unsigned { other = 0, bf16 = 1, fp32 = 2 };

CKPT_HOST_DEVICE constexpr std::uint64_t content_code(ContentState state, ContentFormat format) {
  return (static_cast<std::uint64_t>(format) << 2) | static_cast<std::uint64_t>(state);
}

// `key` with its low bits naming the content.
CKPT_HOST_DEVICE constexpr std::uint64_t with_content(std::uint64_t key, std::uint64_t code) {
  return (key & ~kContentMask) | (code & kContentMask);
}

// One state's value distribution: bins of exponents top, top - 1, ..., their probabilities in
// 128ths as byte counts (bins 0-7 in `low`, 8-15 in `high`, byte i = bin i), summing to 128.
struct ValueModel {
  std::uint64_t low;
  std::uint64_t high;
  unsigned top;   // biased exponent (127 = 2^0) of bin 0
  bool positive;  // the sign is always 0
};

// Eight byte counts as one word, byte i = count i.
CKPT_HOST_DEVICE constexpr std::uint64_t bins(unsigned c0, unsigned c1, unsigned c2, unsigned c3,
                                              unsigned c4, unsigned c5, unsigned c6, unsigned c7) {
  return std::uint64_t{c0} | std::uint64_t{c1} << 8 | std::uint64_t{c2} << 16 |
         std::uint64_t{c3} << 24 | std::uint64_t{c4} << 32 | std::uint64_t{c5} << 40 |
         std::uint64_t{c6} << 48 | std::uint64_t{c7} << 56;
}

CKPT_HOST_DEVICE constexpr ValueModel value_model(ContentState state) {
  switch (state) {
    case ContentState::weight:
    case ContentState::master:
      return {bins(2, 22, 42, 30, 16, 8, 4, 2), bins(1, 1, 0, 0, 0, 0, 0, 0), 123, false};
    case ContentState::exp_avg:
      return {bins(1, 2, 2, 2, 5, 21, 34, 28), bins(16, 9, 4, 2, 1, 1, 0, 0), 121, false};
    case ContentState::exp_avg_sq:
      return {bins(1, 4, 3, 0, 0, 0, 0, 0), bins(0, 3, 26, 58, 23, 6, 2, 2), 120, true};
  }
  return {bins(128, 0, 0, 0, 0, 0, 0, 0), 0, 127, false};
}

// The bin a 7-bit selector picks: how many cumulative counts (thresholds) it reaches. The
// thresholds are the byte-wise prefix sums of the counts (a multiply: they stay below 256), and
// eight selector-versus-threshold comparisons run at once in one word (each byte's high bit).
CKPT_HOST_DEVICE inline unsigned exponent_drop(unsigned selector, const ValueModel& m) {
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  const std::uint64_t low = m.low * ones;                         // byte i: counts 0..i
  const std::uint64_t high = m.high * ones + (low >> 56) * ones;  // continues from bin 7
  const std::uint64_t s = (selector & 0x7Fu) * ones;
  const std::uint64_t reached =
      ((((s | highs) - low) & highs) >> 7) + ((((s | highs) - high) & highs) >> 7);
  return static_cast<unsigned>((reached * ones) >> 56);
}

// The exponent a selector picks from a model: the device's way (no table).
struct ModelPick {
  ValueModel m;
  CKPT_HOST_DEVICE unsigned operator()(unsigned selector) const {
    return m.top - exponent_drop(selector, m);
  }
};

// Four bf16 values (16 random bits each: selector bits 7-13, sign bit 15, mantissa bits 0-6);
// `pick` maps a selector to its biased exponent.
template <typename Pick>
CKPT_HOST_DEVICE inline std::uint64_t trained_bf16_word(std::uint64_t random, bool positive,
                                                        const Pick& pick) {
  std::uint64_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const auto r = static_cast<unsigned>(random >> (16 * i)) & 0xFFFFu;
    const unsigned sign = positive ? 0u : (r & 0x8000u);
    out |= static_cast<std::uint64_t>(sign | (pick((r >> 7) & 0x7Fu) << 7) | (r & 0x7Fu))
           << (16 * i);
  }
  return out;
}

// Two fp32 values (32 random bits each: selector bits 23-29, sign bit 31, mantissa bits 0-22).
template <typename Pick>
CKPT_HOST_DEVICE inline std::uint64_t trained_fp32_word(std::uint64_t random, bool positive,
                                                        const Pick& pick) {
  std::uint64_t out = 0;
  for (int i = 0; i < 2; ++i) {
    const auto r = static_cast<std::uint32_t>(random >> (32 * i));
    const std::uint32_t sign = positive ? 0u : (r & 0x80000000u);
    const std::uint32_t exponent = pick((r >> 23) & 0x7Fu);
    out |= static_cast<std::uint64_t>(sign | (exponent << 23) | (r & 0x7FFFFFu)) << (32 * i);
  }
  return out;
}

// The trained word for `random` bits of the tensor whose key carries its content code, its
// exponents picked by `pick` (ModelPick of the key's state, or a table of the same).
template <typename Pick>
CKPT_HOST_DEVICE inline std::uint64_t trained_word(std::uint64_t key, std::uint64_t random,
                                                   const Pick& pick) {
  const bool positive = value_model(static_cast<ContentState>(key & 3u)).positive;
  switch (static_cast<ContentFormat>((key >> 2) & 3u)) {
    case ContentFormat::bf16:
      return trained_bf16_word(random, positive, pick);
    case ContentFormat::fp32:
      return trained_fp32_word(random, positive, pick);
    case ContentFormat::other:
      break;
  }
  return random;
}

CKPT_HOST_DEVICE inline std::uint64_t trained_word(std::uint64_t key, std::uint64_t random) {
  return trained_word(key, random, ModelPick{value_model(static_cast<ContentState>(key & 3u))});
}

}  // namespace ckpt::harness::pattern
