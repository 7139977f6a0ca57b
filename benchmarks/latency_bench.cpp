// What measure.latency costs per request: LatencyHistogram::record alone, the steady_clock
// reads around a request, and both together (what posix adds to each pwrite/pread call).
//
//   build/bin/ckpt_bench_latency --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "backends/latency_histogram.hpp"

namespace {

using ckpt::backends::LatencyHistogram;
using Clock = std::chrono::steady_clock;

// Latencies from 1 µs to about 70 ms, spread over many buckets (a fixed pseudo-random walk).
std::vector<std::uint64_t> sample_latencies() {
  std::vector<std::uint64_t> v(4096);
  std::uint64_t x = 88172645463325252ULL;
  for (auto& n : v) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    n = 1000 + (x >> 40);
  }
  return v;
}

void BM_Record(benchmark::State& state) {
  const std::vector<std::uint64_t> values = sample_latencies();
  LatencyHistogram h;
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Record);

void BM_ClockPair(benchmark::State& state) {
  std::uint64_t sum = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    sum += static_cast<std::uint64_t>((Clock::now() - start).count());
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ClockPair);

void BM_TimedRequest(benchmark::State& state) {
  LatencyHistogram h;
  for (auto _ : state) {
    const auto start = Clock::now();
    h.record(static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()));
  }
  benchmark::DoNotOptimize(h.count());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TimedRequest);

void BM_MergeAndPercentiles(benchmark::State& state) {
  const std::vector<std::uint64_t> values = sample_latencies();
  LatencyHistogram worker;
  for (const std::uint64_t v : values) worker.record(v);
  for (auto _ : state) {
    LatencyHistogram merged;
    merged.merge(worker);
    benchmark::DoNotOptimize(merged.percentile(0.99));
  }
}
BENCHMARK(BM_MergeAndPercentiles);

}  // namespace
