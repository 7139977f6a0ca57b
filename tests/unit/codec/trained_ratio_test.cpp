// The codecs on data.pattern = "trained", 4 MiB of each state a mixed-precision Adam checkpoint
// holds. The values are independent draws of sign, exponent (the state's model) and mantissa, so
// their entropy bounds every lossless ratio: bits per value / (sign bits + the exponent
// distribution's entropy + mantissa bits). The byte-grouped codec must reach at least 95 % of that
// bound (and cannot pass it); zstd on the bytes as stored must stay within 0.03 of the ratio it
// reached when this test was written (level 3, one 4 MiB frame), well below the grouped codec.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/codec/codec.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/trained_words.hpp"

namespace ckpt::harness::codec {
namespace {

using pattern::ContentFormat;
using pattern::ContentState;

struct Kind {
  const char* name;
  ContentState state;
  ContentFormat format;
  double zstd_ratio;  // measured with libzstd 1.5.4
};

double exponent_entropy(const pattern::ValueModel& m) {
  double h = 0;
  for (unsigned k = 0; k < 16; ++k) {
    const std::uint64_t word = k < 8 ? m.low : m.high;
    const double p = static_cast<double>((word >> (8 * (k % 8))) & 0xFFu) / 128.0;
    if (p > 0) h -= p * std::log2(p);
  }
  return h;
}

double entropy_bound(const Kind& k) {
  const pattern::ValueModel m = pattern::value_model(k.state);
  const double width = k.format == ContentFormat::bf16 ? 16 : 32;
  const double mantissa = k.format == ContentFormat::bf16 ? 7 : 23;
  return width / ((m.positive ? 0 : 1) + exponent_entropy(m) + mantissa);
}

double ratio(const std::vector<std::byte>& raw, const CodecSettings& s) {
  return static_cast<double>(raw.size()) / static_cast<double>(Encoder(s).encode(raw).size());
}

TEST(TrainedRatio, GroupedNearTheEntropyBoundAndZstdAtItsMeasuredRatio) {
  const Kind kinds[] = {
      {"weight-bf16", ContentState::weight, ContentFormat::bf16, 1.28},
      {"master-fp32", ContentState::master, ContentFormat::fp32, 1.08},
      {"exp_avg-fp32", ContentState::exp_avg, ContentFormat::fp32, 1.07},
      {"exp_avg_sq-fp32", ContentState::exp_avg_sq, ContentFormat::fp32, 1.115},
  };
  for (const Kind& k : kinds) {
    std::vector<std::byte> raw(4 << 20);
    fill_pattern(
        raw.data(), raw.size(), DataPattern::trained,
        pattern::with_content(0xabcdef0123456780ULL, pattern::content_code(k.state, k.format)));
    const int element = k.format == ContentFormat::bf16 ? 2 : 4;
    const double grouped = ratio(raw, {Codec::grouped, 3, element});
    const double zstd = ratio(raw, {Codec::zstd, 3, 1});
    const double bound = entropy_bound(k);
    EXPECT_GE(grouped, 0.95 * bound) << k.name << ": bound " << bound;
    EXPECT_LE(grouped, bound) << k.name;
    EXPECT_NEAR(zstd, k.zstd_ratio, 0.03) << k.name;
    EXPECT_LT(zstd, grouped) << k.name;
  }
}

}  // namespace
}  // namespace ckpt::harness::codec
