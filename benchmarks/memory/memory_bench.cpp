// Memory spaces and device staging:
//   staging/{d2h,h2d}/plain            one cudaMemcpyAsync of the whole buffer to/from pinned
//   memory staging/{d2h,h2d}/pipeline/<chunk>  the staging pipeline (memory.staging_bytes chunks,
//   two
//                                      pinned buffers) feeding the null backend: copy speed alone
//   staging/split/...                  cutting a 2000-file plan into chunks (CPU only)
//   space/<host|kokkos|pinned|cuda>/{fill,verify,checkpoint}   checkpoint = posix write of the
//                                      buffer into one file, buffered, no fsync (cuda: staged in
//                                      64 MiB chunks through two pinned buffers)
// Staging needs a GPU: without one those benchmarks report the reason and measure nothing.
//
//   build/bin/ckpt_bench_memory --benchmark_filter='space/' --benchmark_repetitions=5
//
// Environment: CKPT_BENCH_MEMORY_MIB (buffer size, default 256), CKPT_BENCH_DIR (see
// benchmarks/backends/README.md: where the checkpoint file goes).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "benchmarks/backends/scratch_dir.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/memory/staging.hpp"

namespace {

using namespace ckpt::harness;
using ckpt::backends::IoPlan;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kShard = 16 * kMiB;  // fill and verify work shard by shard, as in a case

std::uint64_t buffer_bytes() {
  const char* mib = std::getenv("CKPT_BENCH_MEMORY_MIB");
  return (mib != nullptr ? std::max(1L, std::atol(mib)) : 256) * static_cast<std::int64_t>(kMiB);
}

std::vector<PatternRange> shards(std::uint64_t bytes) {
  std::vector<PatternRange> ranges;
  for (std::uint64_t at = 0; at < bytes; at += kShard)
    ranges.push_back({at, std::min(kShard, bytes - at), at + 1});
  return ranges;
}

IoPlan one_file(const std::string& path, std::uint64_t bytes) {
  IoPlan plan;
  plan.files.push_back({.path = path, .extents = {{0, 0, bytes}}, .file_size = bytes});
  return plan;
}

// A filled buffer of `kind`, or nullptr after skipping with the reason.
std::unique_ptr<Buffer> filled(benchmark::State& state, MemorySpaces& spaces,
                               MemorySpaceKind kind) {
  if (const auto why = spaces.unavailable(kind)) {
    state.SkipWithError(
        ("memory.space = \"" + std::string(memory_space_name(kind)) + "\": " + *why).c_str());
    return nullptr;
  }
  auto buffer = spaces.get(kind).allocate(buffer_bytes());
  buffer->fill(shards(buffer->size()), DataPattern::random);
  return buffer;
}

void plain_copy(benchmark::State& state, MemorySpaces& spaces, bool to_host) {
  const auto buffer = filled(state, spaces, MemorySpaceKind::cuda);
  if (!buffer) return;
  const auto copier = buffer->copier(buffer->size(), 1);
  double copy_seconds = 0;
  for (auto _ : state) {
    copier->start(0, 0, buffer->size(), to_host);
    copy_seconds += copier->wait(0);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buffer->size()));
  state.counters["copy_GiB/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) *
                         static_cast<double>(buffer->size()) / copy_seconds / (1 << 30));
}

void pipeline(benchmark::State& state, MemorySpaces& spaces, bool to_host, std::uint64_t chunk) {
  const auto buffer = filled(state, spaces, MemorySpaceKind::cuda);
  if (!buffer) return;
  const auto null = ckpt::backends::make_backend("null", ckpt::backends::IoSettings{});
  Stager stager = make_stager(*buffer, StagingSettings{chunk, 2}, false);
  const IoPlan plan = one_file("/dev/null", buffer->size());
  double copy_seconds = 0;
  for (auto _ : state) {
    const StagedOutcome out = to_host ? stager.write(*null, plan, 0) : stager.read(*null, plan, 0);
    if (!out.io.ok()) {
      state.SkipWithError(out.io.error->c_str());
      break;
    }
    copy_seconds += out.copy_seconds;
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buffer->size()));
  state.counters["copy_GiB/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) *
                         static_cast<double>(buffer->size()) / copy_seconds / (1 << 30));
}

// Cutting a plan into staging chunks happens inside the timed checkpoint: its cost for a
// file_per_tensor-like plan (`files` files of one 1 MiB extent each).
void split(benchmark::State& state, std::uint64_t files, std::uint64_t chunk) {
  IoPlan plan;
  for (std::uint64_t f = 0; f < files; ++f) {
    plan.files.push_back({.path = "/checkpoint/step_0000001/tensor_" + std::to_string(f) + ".bin",
                          .extents = {{0, f * kMiB, kMiB}}});
  }
  for (auto _ : state) benchmark::DoNotOptimize(split_plan(plan, chunk));
  state.counters["chunks"] = static_cast<double>(split_plan(plan, chunk).size());
}

void fill(benchmark::State& state, MemorySpaces& spaces, MemorySpaceKind kind) {
  const auto buffer = filled(state, spaces, kind);
  if (!buffer) return;
  const auto ranges = shards(buffer->size());
  for (auto _ : state) buffer->fill(ranges, DataPattern::random);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buffer->size()));
}

void verify(benchmark::State& state, MemorySpaces& spaces, MemorySpaceKind kind) {
  const auto buffer = filled(state, spaces, kind);
  if (!buffer) return;
  const auto ranges = shards(buffer->size());
  for (auto _ : state) {
    if (buffer->first_mismatch(ranges, DataPattern::random))
      state.SkipWithError("verification failed");
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buffer->size()));
}

void checkpoint(benchmark::State& state, MemorySpaces& spaces, MemorySpaceKind kind,
                const std::string& dir) {
  const auto buffer = filled(state, spaces, kind);
  if (!buffer) return;
  const auto posix = ckpt::backends::make_backend("posix", ckpt::backends::IoSettings{});
  const IoPlan plan =
      one_file(dir + "/checkpoint-" + std::string(memory_space_name(kind)), buffer->size());
  // Device memory goes through the staging pipeline with the default chunks, as in a campaign.
  std::optional<Stager> stager;
  if (buffer->view().kind == ckpt::backends::MemoryKind::device)
    stager.emplace(make_stager(*buffer, {}, false));
  for (auto _ : state) {
    const auto out =
        stager ? stager->write(*posix, plan, 0).io : posix->write(plan, buffer->view());
    if (!out.ok()) state.SkipWithError(out.error->c_str());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buffer->size()));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  MemorySpaces spaces;  // Kokkos starts with the first kokkos benchmark and ends here
  const ckpt::bench::ScratchDir scratch;
  if (const auto why = spaces.unavailable(MemorySpaceKind::cuda)) {
    std::cerr << "staging benchmarks measure nothing here: " << *why << '\n';
  }
  const auto time_unit = benchmark::kMillisecond;
  for (const bool to_host : {true, false}) {
    const std::string dir = to_host ? "d2h" : "h2d";
    benchmark::RegisterBenchmark(("staging/" + dir + "/plain").c_str(), plain_copy,
                                 std::ref(spaces), to_host)
        ->Unit(time_unit)
        ->UseRealTime();
    for (const std::uint64_t chunk : {4 * kMiB, 16 * kMiB, 64 * kMiB}) {
      benchmark::RegisterBenchmark(
          ("staging/" + dir + "/pipeline/" + std::to_string(chunk / kMiB) + "MiB").c_str(),
          pipeline, std::ref(spaces), to_host, chunk)
          ->Unit(time_unit)
          ->UseRealTime();
    }
  }
  for (const std::uint64_t chunk : {4 * kMiB, 64 * kMiB}) {
    benchmark::RegisterBenchmark(
        ("staging/split/2000files/" + std::to_string(chunk / kMiB) + "MiB").c_str(), split,
        std::uint64_t{2000}, chunk)
        ->Unit(benchmark::kMicrosecond);
  }
  for (const MemorySpaceKind kind : {MemorySpaceKind::host, MemorySpaceKind::kokkos,
                                     MemorySpaceKind::pinned, MemorySpaceKind::cuda}) {
    const std::string name = "space/" + std::string(memory_space_name(kind));
    benchmark::RegisterBenchmark((name + "/fill").c_str(), fill, std::ref(spaces), kind)
        ->Unit(time_unit)
        ->UseRealTime();
    benchmark::RegisterBenchmark((name + "/verify").c_str(), verify, std::ref(spaces), kind)
        ->Unit(time_unit)
        ->UseRealTime();
    benchmark::RegisterBenchmark((name + "/checkpoint").c_str(), checkpoint, std::ref(spaces), kind,
                                 scratch.path().string())
        ->Unit(time_unit)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
