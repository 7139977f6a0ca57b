#include "backends/latency_histogram.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace ckpt::backends {

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

std::uint64_t LatencyHistogram::bucket_low(std::size_t bucket) noexcept {
  if (bucket < kSubBuckets) return bucket;
  const std::uint64_t shift = bucket / kSubBuckets - 1;
  return (kSubBuckets + bucket % kSubBuckets) << shift;
}

std::uint64_t LatencyHistogram::bucket_high(std::size_t bucket) noexcept {
  if (bucket < kSubBuckets) return bucket;
  const std::uint64_t shift = bucket / kSubBuckets - 1;
  return bucket_low(bucket) + ((std::uint64_t{1} << shift) - 1);
}

std::uint64_t LatencyHistogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  const double clamped = std::clamp(q, 0.0, 1.0);
  const auto wanted = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(clamped * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= wanted) return std::min(bucket_high(i), max_);
  }
  return max_;
}

std::string LatencyHistogram::serialize() const {
  std::ostringstream out;
  out << count_ << ' ' << sum_ << ' ' << min() << ' ' << max();
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (counts_[i] != 0) out << ' ' << i << ':' << counts_[i];
  }
  return out.str();
}

LatencyHistogram LatencyHistogram::parse(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("latency histogram: cannot parse \"" + text.substr(0, 80) + "\"");
  };
  std::istringstream in(text);
  LatencyHistogram h;
  std::uint64_t min = 0;
  if (!(in >> h.count_ >> h.sum_ >> min >> h.max_)) throw bad();
  h.min_ = h.count_ ? min : ~std::uint64_t{0};
  std::uint64_t total = 0;
  std::string pair;
  while (in >> pair) {
    const std::size_t colon = pair.find(':');
    if (colon == std::string::npos) throw bad();
    std::size_t index = 0, count = 0;
    try {
      index = std::stoull(pair.substr(0, colon));
      count = std::stoull(pair.substr(colon + 1));
    } catch (const std::exception&) {
      throw bad();
    }
    if (index >= kBuckets) throw bad();
    h.counts_[index] += count;
    total += count;
  }
  if (total != h.count_) throw bad();
  return h;
}

}  // namespace ckpt::backends
