// data.pattern = "trained": each state's exponents follow its model bin by bin, signs are fair
// (exp_avg_sq never negative), mantissas uniform; the content comes from the key's low bits.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "harness/memory/data_pattern.hpp"
#include "harness/memory/trained_words.hpp"

namespace ckpt::harness {
namespace {

using pattern::ContentFormat;
using pattern::ContentState;

constexpr std::array kStates{ContentState::weight, ContentState::master, ContentState::exp_avg,
                             ContentState::exp_avg_sq};

// The model's count (in 128ths) of bin k.
unsigned model_count(const pattern::ValueModel& m, unsigned k) {
  const std::uint64_t word = k < 8 ? m.low : m.high;
  return static_cast<unsigned>((word >> (8 * (k % 8))) & 0xFFu);
}

struct Fields {
  std::map<unsigned, std::uint64_t> exponents;
  std::uint64_t negative = 0;
  std::uint64_t mantissa_low_bit = 0;  // values whose lowest mantissa bit is set
  std::uint64_t values = 0;
};

Fields fields_of(ContentFormat format, std::uint64_t key, std::size_t values) {
  const std::size_t width = format == ContentFormat::bf16 ? 2 : 4;
  std::vector<std::byte> data(values * width);
  fill_pattern(data.data(), data.size(), DataPattern::trained, key);
  Fields f;
  f.values = values;
  for (std::size_t i = 0; i < values; ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, data.data() + i * width, width);  // little-endian host
    const unsigned mantissa_bits = width == 2 ? 7 : 23;
    f.exponents[(v >> mantissa_bits) & 0xFFu] += 1;
    f.negative += v >> (8 * width - 1);
    f.mantissa_low_bit += v & 1u;
  }
  return f;
}

// |found - expected| within 6 standard deviations of a binomial count (plus one for rounding).
void expect_count(std::uint64_t found, double p, std::uint64_t n, const std::string& what) {
  const double expected = p * static_cast<double>(n);
  const double sigma = std::sqrt(expected * (1 - p));
  EXPECT_LE(std::abs(static_cast<double>(found) - expected), 6 * sigma + 1)
      << what << ": " << found << " found, " << expected << " expected";
}

TEST(TrainedPattern, EveryModelSumsTo128AndStaysNormal) {
  for (ContentState s : kStates) {
    const pattern::ValueModel m = pattern::value_model(s);
    unsigned total = 0;
    for (unsigned k = 0; k < 16; ++k) total += model_count(m, k);
    EXPECT_EQ(total, 128u) << "state " << static_cast<int>(s);
    EXPECT_GE(m.top, 16u) << "the lowest bin keeps a normal exponent";
    EXPECT_LE(m.top, 254u);
  }
}

TEST(TrainedPattern, ExponentsSignsAndMantissasFollowEachStatesModel) {
  constexpr std::size_t n = 1 << 17;
  for (ContentFormat format : {ContentFormat::bf16, ContentFormat::fp32}) {
    for (ContentState s : kStates) {
      const std::uint64_t key =
          pattern::with_content(0x9e3779b97f4a7c10ULL, pattern::content_code(s, format));
      const pattern::ValueModel m = pattern::value_model(s);
      const Fields f = fields_of(format, key, n);
      const std::string what = "format " + std::to_string(static_cast<int>(format)) + ", state " +
                               std::to_string(static_cast<int>(s));
      std::uint64_t inside = 0;
      for (unsigned k = 0; k < 16; ++k) {
        const auto at = f.exponents.find(m.top - k);
        const std::uint64_t found = at == f.exponents.end() ? 0 : at->second;
        inside += found;
        expect_count(found, model_count(m, k) / 128.0, n, what + ", bin " + std::to_string(k));
      }
      EXPECT_EQ(inside, n) << what << ": every exponent in the model's 16 bins";
      if (m.positive) {
        EXPECT_EQ(f.negative, 0u) << what;
      } else {
        expect_count(f.negative, 0.5, n, what + ", signs");
      }
      expect_count(f.mantissa_low_bit, 0.5, n, what + ", mantissa");
    }
  }
}

TEST(TrainedPattern, OtherFormatsGetTheRandomPatternsBytes) {
  const std::uint64_t key = pattern::with_content(
      0x1234567890ULL, pattern::content_code(ContentState::weight, ContentFormat::other));
  std::vector<std::byte> trained(1000);
  std::vector<std::byte> random(1000);
  fill_pattern(trained.data(), trained.size(), DataPattern::trained, key);
  fill_pattern(random.data(), random.size(), DataPattern::random, key);
  EXPECT_EQ(trained, random);
}

TEST(TrainedPattern, DeterministicAtAnyOffsetAndEveryFlippedByteIsFound) {
  const std::uint64_t key = pattern::with_content(
      77 << 4, pattern::content_code(ContentState::exp_avg, ContentFormat::fp32));
  std::vector<std::byte> whole(4096);
  fill_pattern(whole.data(), whole.size(), DataPattern::trained, key);
  std::vector<std::byte> part(1001);
  fill_pattern(part.data(), part.size(), DataPattern::trained, key, 13);
  EXPECT_EQ(std::memcmp(part.data(), whole.data() + 13, part.size()), 0);
  EXPECT_FALSE(first_mismatch(part.data(), part.size(), DataPattern::trained, key, 13));
  for (std::size_t at : {std::size_t{0}, std::size_t{500}, std::size_t{1000}}) {
    part[at] ^= std::byte{0x01};
    EXPECT_EQ(first_mismatch(part.data(), part.size(), DataPattern::trained, key, 13), at);
    part[at] ^= std::byte{0x01};
  }
}

}  // namespace
}  // namespace ckpt::harness
