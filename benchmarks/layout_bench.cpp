// Layout generation speed: the MLPerf 1T model on TP8 × PP64 × DP32 (16,384 ranks).
// Run: build/bin/ckpt_bench_layout [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include "harness/models/model_zoo.hpp"
#include "workloads/layout.hpp"
#include "workloads/layout_summary.hpp"

namespace {

using namespace ckpt::workloads;

Layout one_trillion_layout(int zero) {
  const ParallelSpec parallel{.tp = 8, .pp = 64, .dp = 32, .zero_stage = zero};
  return Layout(ckpt::harness::zoo_model("mlperf-1t"), parallel, StateSpec{});
}

void BM_Layout1TConstruct(benchmark::State& state) {
  const ModelSpec model = ckpt::harness::zoo_model("mlperf-1t");
  for (auto _ : state) {
    Layout layout(model, {.tp = 8, .pp = 64, .dp = 32, .zero_stage = 1}, StateSpec{});
    benchmark::DoNotOptimize(layout);
  }
}
BENCHMARK(BM_Layout1TConstruct)->Unit(benchmark::kMicrosecond);

void BM_Layout1TWorldSummary(benchmark::State& state) {
  const Layout layout = one_trillion_layout(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(summarize(layout));
  state.counters["ranks"] = static_cast<double>(layout.world_size());
}
BENCHMARK(BM_Layout1TWorldSummary)->Arg(0)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond);

// Args: ZeRO stage, rank. Rank 0 is the busiest (embedding, first layers, every replicated
// tensor); rank 16,131 is tp 3, dp 0 of the last stage; rank 16,171 is tp 3, dp 5 there.
void BM_Layout1TOneRankShards(benchmark::State& state) {
  const Layout layout = one_trillion_layout(static_cast<int>(state.range(0)));
  const std::int64_t rank = state.range(1);
  std::int64_t shards = 0;
  for (auto _ : state) {
    auto list = layout.shards(rank);
    shards = static_cast<std::int64_t>(list.size());
    benchmark::DoNotOptimize(list);
  }
  state.counters["shards"] = static_cast<double>(shards);
}
BENCHMARK(BM_Layout1TOneRankShards)
    ->ArgsProduct({{0, 1, 3}, {0, 16131, 16171}})
    ->Unit(benchmark::kMicrosecond);

// 131,072 ranks: TP8 × PP64 × DP256.
void BM_Layout1TWorldSummary128kRanks(benchmark::State& state) {
  const Layout layout(ckpt::harness::zoo_model("mlperf-1t"),
                      {.tp = 8, .pp = 64, .dp = 256, .zero_stage = 1}, StateSpec{});
  for (auto _ : state) benchmark::DoNotOptimize(summarize(layout));
  state.counters["ranks"] = static_cast<double>(layout.world_size());
}
BENCHMARK(BM_Layout1TWorldSummary128kRanks)->Unit(benchmark::kMillisecond);

void BM_LayoutDeepSeekOneRankShards(benchmark::State& state) {
  const Layout layout(ckpt::harness::zoo_model("deepseek-v3"),
                      {.tp = 1, .pp = 1, .dp = 64, .ep = 64, .zero_stage = 1}, StateSpec{});
  for (auto _ : state) benchmark::DoNotOptimize(layout.shards(1));
}
BENCHMARK(BM_LayoutDeepSeekOneRankShards)->Unit(benchmark::kMicrosecond);

}  // namespace
