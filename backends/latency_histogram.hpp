#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ckpt::backends {

// Per-request latencies in log-linear buckets (HDR-histogram style): values below 64 ns have
// a bucket each; above, every power of two [2^b, 2^(b+1)) is cut into 64 equal buckets, so a
// bucket is at most 1/64 (1.6 %) of its lower bound wide. Covers every uint64 nanosecond value
// in 3,776 buckets (30 KiB, on the heap: results hold several histograms, and a 30 KiB stack
// frame under a tight `ulimit -v` kills the process with SIGSEGV where a failed allocation is
// a clean error). record() is a few instructions and never allocates or locks: each worker
// thread records into its own histogram and the owner merges them after the join.
class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 6;
  static constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBits;  // 64
  static constexpr std::size_t kBuckets = (64 - kSubBits + 1) * kSubBuckets;  // 3,776

  void record(std::uint64_t nanoseconds) noexcept {
    ++counts_[bucket_of(nanoseconds)];
    ++count_;
    sum_ += nanoseconds;
    if (nanoseconds > max_) max_ = nanoseconds;
    if (nanoseconds < min_) min_ = nanoseconds;
  }
  void merge(const LatencyHistogram& other) noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t max() const noexcept { return count_ ? max_ : 0; }
  std::uint64_t min() const noexcept { return count_ ? min_ : 0; }
  double mean() const noexcept {
    return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0;
  }
  // The value at quantile q in [0, 1]: the highest value of the bucket that holds the
  // ceil(q × count)-th smallest request (at least the first), never above max(): at most 1.6 %
  // above the true value, never below it. 0 when empty.
  std::uint64_t percentile(double q) const noexcept;

  // Bucket of a value, and the lowest and highest value a bucket holds.
  static std::size_t bucket_of(std::uint64_t v) noexcept {
    if (v < kSubBuckets) return static_cast<std::size_t>(v);
    const unsigned shift = static_cast<unsigned>(std::bit_width(v)) - 1 - kSubBits;  // top bit - 6
    return static_cast<std::size_t>((shift + 1) * kSubBuckets + ((v >> shift) - kSubBuckets));
  }
  static std::uint64_t bucket_low(std::size_t bucket) noexcept;
  static std::uint64_t bucket_high(std::size_t bucket) noexcept;

  // Compact text of the non-empty buckets and the exact count, sum, min and max ("c s min max
  // i:n i:n …"), for sending between processes; parse() throws std::invalid_argument on text
  // that is not such.
  std::string serialize() const;
  static LatencyHistogram parse(const std::string& text);

 private:
  std::vector<std::uint64_t> counts_ = std::vector<std::uint64_t>(kBuckets);
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t max_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
};

}  // namespace ckpt::backends
