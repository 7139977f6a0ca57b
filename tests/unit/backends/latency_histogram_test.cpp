// LatencyHistogram: bucket bounds, percentiles exact on known inputs, merge, the text form that
// travels between processes, and per-thread recording merged after the join (TSan: *Worker*).
#include "backends/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends {
namespace {

TEST(LatencyHistogram, ValuesBelow128NanosecondsAreExact) {
  LatencyHistogram h;
  for (std::uint64_t v = 1; v <= 100; ++v) h.record(v);
  EXPECT_EQ(h.count(), 100u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 100u);
  EXPECT_DOUBLE_EQ(h.mean(), 50.5);
  EXPECT_EQ(h.percentile(0.50), 50u);    // the 50th smallest of 1..100
  EXPECT_EQ(h.percentile(0.99), 99u);    // 99 ≥ 64: bucket 64 + (99 - 64) = 99, one value wide
  EXPECT_EQ(h.percentile(0.999), 100u);  // ceil(99.9) = the 100th
  EXPECT_EQ(h.percentile(0.0), 1u);      // at least the first
  EXPECT_EQ(h.percentile(1.0), 100u);
}

TEST(LatencyHistogram, PercentileIsTheBucketsHighestValueCappedAtMax) {
  // 1000 ns: bit width 10, shift 3, 1000 >> 3 = 125: bucket [125 << 3, 126 << 3) = [1000, 1007].
  // 5000 ns: shift 6, 5000 >> 6 = 78: bucket [4992, 5055], capped at the max, 5000.
  LatencyHistogram h;
  for (std::uint64_t v : {1000u, 1003u, 5000u}) h.record(v);
  EXPECT_EQ(LatencyHistogram::bucket_low(LatencyHistogram::bucket_of(1003)), 1000u);
  EXPECT_EQ(LatencyHistogram::bucket_high(LatencyHistogram::bucket_of(1003)), 1007u);
  EXPECT_EQ(LatencyHistogram::bucket_low(LatencyHistogram::bucket_of(5000)), 4992u);
  EXPECT_EQ(LatencyHistogram::bucket_high(LatencyHistogram::bucket_of(5000)), 5055u);
  EXPECT_EQ(h.percentile(0.33), 1007u);  // ceil(0.99) = 1st: 1000's bucket
  EXPECT_EQ(h.percentile(0.50), 1007u);  // ceil(1.5) = 2nd: 1003, same bucket
  EXPECT_EQ(h.percentile(0.99), 5000u);  // 3rd: 5000's bucket, high 5055 capped at max 5000
  EXPECT_EQ(h.max(), 5000u);
  EXPECT_EQ(h.min(), 1000u);
}

TEST(LatencyHistogram, BucketsAreAtMostOneSixtyFourthOfTheirValueWide) {
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 0; v < 70000; ++v) values.push_back(v);
  for (std::uint64_t v = 70000; v < (std::uint64_t{1} << 62); v = v * 3 + 7) values.push_back(v);
  values.push_back(~std::uint64_t{0});
  for (const std::uint64_t v : values) {
    const std::size_t b = LatencyHistogram::bucket_of(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets) << v;
    ASSERT_LE(LatencyHistogram::bucket_low(b), v) << v;
    ASSERT_GE(LatencyHistogram::bucket_high(b), v) << v;
    ASSERT_LE(LatencyHistogram::bucket_high(b) - v, v / 64) << v;  // ≤ 1.6 % above the value
  }
  EXPECT_EQ(LatencyHistogram::bucket_of(~std::uint64_t{0}), LatencyHistogram::kBuckets - 1);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram low, high, all;
  for (std::uint64_t v = 1; v <= 5000; ++v) {
    (v <= 2500 ? low : high).record(v * 1000);
    all.record(v * 1000);
  }
  low.merge(high);
  EXPECT_EQ(low.count(), all.count());
  EXPECT_EQ(low.min(), 1000u);
  EXPECT_EQ(low.max(), 5'000'000u);
  EXPECT_DOUBLE_EQ(low.mean(), all.mean());
  for (double q : {0.5, 0.9, 0.99, 0.999}) EXPECT_EQ(low.percentile(q), all.percentile(q)) << q;
  // p50 = the 2500th smallest, 2,500,000 ns: shift 15, 2500000 >> 15 = 76, bucket [2490368,
  // 2523135].
  EXPECT_EQ(all.percentile(0.5), 2523135u);
  LatencyHistogram empty;
  low.merge(empty);
  EXPECT_EQ(low.count(), all.count());
  EXPECT_EQ(empty.percentile(0.5), 0u);
  EXPECT_EQ(empty.max(), 0u);
}

TEST(LatencyHistogram, TextFormRoundTripsAndRejectsGarbage) {
  LatencyHistogram h;
  for (std::uint64_t v : {7u, 700u, 70000u, 70000u}) h.record(v);
  const LatencyHistogram back = LatencyHistogram::parse(h.serialize());
  EXPECT_EQ(back.serialize(), h.serialize());
  EXPECT_EQ(back.count(), 4u);
  EXPECT_EQ(back.percentile(0.75), h.percentile(0.75));
  EXPECT_EQ(LatencyHistogram::parse(LatencyHistogram().serialize()).count(), 0u);
  EXPECT_THROW(LatencyHistogram::parse("2 10 1 9 1:1"),
               std::invalid_argument);  // counts do not add up
  EXPECT_THROW(LatencyHistogram::parse("1 1 1 1 99999:1"), std::invalid_argument);
  EXPECT_THROW(LatencyHistogram::parse("x"), std::invalid_argument);
}

// Each worker records into its own histogram; the owner merges after the join (no lock in the
// request loop). Run under TSan by CI's filter (*Worker*).
TEST(LatencyHistogramWorker, PerThreadHistogramsMergeAfterTheJoin) {
  constexpr int kThreads = 4;
  constexpr std::uint64_t kPerThread = 10000;
  std::vector<LatencyHistogram> mine(kThreads);
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&mine, t] {
        for (std::uint64_t i = 1; i <= kPerThread; ++i)
          mine[static_cast<std::size_t>(t)].record(i + static_cast<std::uint64_t>(t) * kPerThread);
      });
    }
  }
  LatencyHistogram merged;
  for (const LatencyHistogram& h : mine) merged.merge(h);
  EXPECT_EQ(merged.count(), kThreads * kPerThread);
  EXPECT_EQ(merged.min(), 1u);
  EXPECT_EQ(merged.max(), kThreads * kPerThread);
  EXPECT_DOUBLE_EQ(merged.mean(), (kThreads * kPerThread + 1) / 2.0);
}

TEST(LatencyHistogram, BackendsThatDoNotTimeRequestsRefuseTheSetting) {
  IoSettings settings;
  settings.request_latency = true;
  try {
    check_settings("null", Capabilities{}, settings);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("null: `measure.latency = true` is not supported"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check_settings("posix", Capabilities{.request_latency = true}, settings));
}

}  // namespace
}  // namespace ckpt::backends
