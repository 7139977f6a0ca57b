// The load phase (--phase load, campaign.phase = "load"): an inference server's weight loading of
// an existing checkpoint. Each process loads its share of the inference ranks' TP slices, planned
// from the manifest (harness/loadplan/load_plan.hpp), with the loader of load.method
// (harness/load/weight_loader.hpp) through backend.name's backend into memory.space, and
// verifies every tensor.
#include <fmt/format.h>

#include <chrono>

#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/exec/cache_policy.hpp"
#include "harness/exec/planned_load.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

}  // namespace

void CaseExecution::prepare_load() {
  lock_case();
  fs::path dir;
  Manifest manifest;
  const Case source =
      load_source(c_);  // a sweep over load.* loads the first such case's checkpoint
  std::string problem = find_restorable_checkpoint(source, dir, manifest).value_or("");
  if (const auto& p = comm_.first_problem(problem); !p.empty()) throw SetupError(p);
  if (const auto& p = comm_.first_problem(unreadable_checkpoint(source, dir, manifest)); !p.empty())
    throw SetupError(p);
  planned_dir_ = dir;
  result_.checkpoint_dir = dir.string();
  if (!written_as_planned(source, dir, manifest)) return;
  ProcessPlans plans;
  try {
    plans =
        plan_process(layout_, c_, phase_, selected_, comm_.rank(), comm_.size(), dir, &manifest);
  } catch (const ReshardError& e) {
    problem = fmt::format("load.tp = {}: {}", c_.load.inference.parallel.tp, e.what());
  } catch (const std::exception& e) {
    problem = fmt::format("{}: damaged manifest: {} — {}", (dir / kManifestName).string(), e.what(),
                          damaged_checkpoint_advice(source, dir));
  }
  if (const std::string first = comm_.first_problem(problem); !first.empty())
    throw SetupError(first);
  check_memory(plans.buffer_bytes());
  read_plans_ = std::move(plans.read);
  MemorySpace& space = memory_space();
  read_buffer_ = ProcessBuffer(read_plans_, space);
  add_notes(space.notes());
  record_sizes(read_plans_);
  result_.modeled_ranks = static_cast<std::int64_t>(inference_ranks(c_.load.inference).size());
}

// One load of every inference rank's slices: caches per cache.policy, the buffer zeroed (the
// vocabulary padding of another TP written, as a server pads), then after a barrier the loader's
// reads and copies and the scatter of strided rows (timed), then verification (not timed).
bool CaseExecution::load_iteration(int, std::vector<IterationTiming>* timings) {
  auto start = Clock::now();
  result_.cache_policy_applied = comm_.broadcast(apply_cache_policy(c_.cache, [this] {
    std::vector<backends::IoPlan> io;
    for (const RankPlan& p : read_plans_) io.push_back(p.io);
    return io;
  }()));
  charge("cache drop", start);
  start = Clock::now();
  const std::vector<LoadFile> ranges = prepare_planned_load(read_plans_, read_buffer_, c_.data);
  charge("zero buffers", start);
  const bool device = read_buffer_.view().kind == backends::MemoryKind::device;
  MemorySpace& pool_space =
      ctx_.memory.get(device ? MemorySpaceKind::pinned : MemorySpaceKind::host);
  comm_.barrier();
  start = Clock::now();
  ProcessSample sample;
  try {
    const LoadStorage storage{.backend = c_.backend, .options = c_.backend_options, .io = c_.io};
    const LoadTiming t =
        load_planned(read_plans_, ranges, read_buffer_, c_.load.settings, pool_space, storage);
    if (!ranges.empty()) load_pool_chunks_ = t.pool_chunks;
    load_reads_ = t.reads;
    sample.copy_seconds = t.copy_seconds;
    sample.seconds = t.seconds;
  } catch (const std::exception& e) {
    sample.error = e.what();
  }
  const IterationTiming timing = gather_timing(sample, comm_);
  charge("load", start);
  return finish_read("load", sample, timing, read_plans_, read_buffer_, c_.verify, timings);
}

void CaseExecution::record_load(const std::vector<IterationTiming>& loads) {
  LoadSummary s;
  const LoadSettings& settings = c_.load.settings;
  s.method = std::string(load_method_name(settings.method));
  s.threads = settings.threads;
  s.direct = settings.direct;
  s.chunk_bytes = settings.chunk_bytes;
  s.pool_bytes = settings.pool_bytes;
  s.pool_chunks = load_pool_chunks_;
  s.memory = std::string(memory_space_name(c_.memory_space));
  s.tp = c_.load.inference.parallel.tp;
  s.checkpoint_tp = c_.parallel.tp;
  s.ranks = result_.modeled_ranks;
  const LoadCounts mine = load_counts(read_plans_);
  s.bytes = comm_.sum(mine.bytes_needed);
  s.bytes_read = comm_.sum(mine.bytes_read);
  s.gap_bytes = c_.load.inference.gap_bytes;
  s.bridged_bytes = comm_.sum(mine.bridged_bytes);
  s.padding_bytes = comm_.sum(mine.padding_bytes);
  s.requests = comm_.sum(mine.requests);
  s.reads = comm_.sum(load_reads_);
  for (const IterationTiming& t : loads) {
    s.time_to_loaded_seconds.push_back(t.seconds);
    s.h2d_seconds.push_back(t.copy_seconds);
  }
  result_.load = s;
}

}  // namespace ckpt::harness
