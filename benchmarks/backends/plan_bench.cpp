// Plan building (plan_ranks): files, offsets and extents of the emulated ranks, before any I/O.
//   - one rank of Llama 3 70B (full state) at TP 8 × PP 4, for each file mapping;
//   - shared_file for node 3 (ranks 24–31) of the MLPerf 1T job at TP 8 × PP 64 × DP 32
//     (16,384 ranks): every rank's region offset in the one file depends on all ranks before it.
// Run: build/bin/ckpt_bench_plan [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <array>
#include <string>

#include "harness/models/model_zoo.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace {

using namespace ckpt::harness;
using ckpt::workloads::Layout;

constexpr std::array kMappings{Mapping::file_per_tensor, Mapping::file_per_rank,
                               Mapping::file_per_node, Mapping::shared_file};

Case make_case(const std::string& model, const ckpt::workloads::ParallelSpec& parallel,
               Mapping mapping) {
  Case c;
  c.model_argument = model;
  c.model = zoo_model(model);
  c.parallel = parallel;
  c.mapping = mapping;
  return c;
}

void report(benchmark::State& state, const std::vector<RankPlan>& plans) {
  std::uint64_t files = 0;
  std::uint64_t extents = 0;
  std::uint64_t shards = 0;
  for (const RankPlan& p : plans) {
    files += p.io.files.size();
    extents += p.io.extents();
    shards += p.shards.size();
  }
  state.counters["ranks"] = static_cast<double>(plans.size());
  state.counters["shards"] = static_cast<double>(shards);
  state.counters["files"] = static_cast<double>(files);
  state.counters["extents"] = static_cast<double>(extents);
}

// Arg: index into kMappings.
void BM_PlanLlama70bRank0(benchmark::State& state) {
  Case c = make_case("llama3-70b", {.tp = 8, .pp = 4},
                     kMappings[static_cast<std::size_t>(state.range(0))]);
  c.ranks.select = RankSelect::list;
  c.ranks.list = {0};
  const Layout layout(c.model, c.parallel, c.state);
  const std::vector<std::int64_t> ranks = selected_ranks(c, layout.world_size());
  std::vector<RankPlan> plans;
  for (auto _ : state) {
    plans = plan_ranks(layout, c, ranks, "/ckpt/step_0000001");
    benchmark::DoNotOptimize(plans);
  }
  state.SetLabel(std::string(mapping_name(c.mapping)));
  report(state, plans);
}
BENCHMARK(BM_PlanLlama70bRank0)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

// Arg: ZeRO stage.
void BM_Plan1TSharedFileNode3(benchmark::State& state) {
  const int zero = static_cast<int>(state.range(0));
  Case c = make_case("mlperf-1t", {.tp = 8, .pp = 64, .dp = 32, .zero_stage = zero},
                     Mapping::shared_file);
  c.ranks.select = RankSelect::node;
  c.ranks.node = 3;
  c.ranks.gpus_per_node = 8;
  const Layout layout(c.model, c.parallel, c.state);
  const std::vector<std::int64_t> ranks = selected_ranks(c, layout.world_size());
  std::vector<RankPlan> plans;
  for (auto _ : state) {
    plans = plan_ranks(layout, c, ranks, "/ckpt/step_0000001");
    benchmark::DoNotOptimize(plans);
  }
  state.SetLabel("world " + std::to_string(layout.world_size()) + " ranks");
  report(state, plans);
}
BENCHMARK(BM_Plan1TSharedFileNode3)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
