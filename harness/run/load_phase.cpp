// Each process loads its share of the inference ranks' TP slices, planned from the manifest
// (load_plans), with the loader of load.method (load_files) through backend.name's backend into
// memory.space, and verifies every tensor.
#include "harness/run/load_phase.hpp"

#include <fmt/format.h>

#include "harness/exec/cache_policy.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/load/planned_load.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/run/case_setup.hpp"
#include "harness/run/codec_steps.hpp"
#include "harness/run/piece_read.hpp"
#include "harness/run/read_checks.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

}  // namespace

LoadPhase::LoadPhase(CaseState& state) : s_(state) {}

void LoadPhase::prepare() {
  const Case& c = s_.context.c;
  const Case source = load_source(c);  // a sweep over load.* loads the first such case's checkpoint
  fs::path dir;
  Manifest manifest;
  if (!open_stored_checkpoint(s_, source, dir, manifest)) return;
  ProcessPlans plans = plan_stored_reads(
      s_, source, dir, manifest, fmt::format("load.tp = {}: ", c.load.inference.parallel.tp));
  check_memory(s_, plans.buffer_bytes(), plans.exchange.buffer_bytes());
  if (manifest.writer.compression.enabled()) {
    framed_ = framed_files(manifest, dir);
    start_compression_record(s_, manifest.writer.compression);
  }
  CaseBuffers& data = s_.data;
  data.read_plans = std::move(plans.read);
  MemorySpace& space = case_memory_space(s_);
  data.read_buffer = ProcessBuffer(data.read_plans, space);
  s_.record.add_notes(space.notes());
  record_sizes(s_, data.read_plans);
  if (c.load.cooperative) {  // reads its pieces through the case's backend, not the loader's
    prepare_backend(s_);
    prepare_piece_read(s_, std::move(plans.exchange), space);
  }
  s_.record.result.modeled_ranks =
      static_cast<std::int64_t>(inference_ranks(c.load.inference).size());
}

// Caches per cache.policy, the buffer zeroed (the vocabulary padding of another TP written, as a
// server pads), then after a barrier the loader's reads and copies and the scatter of strided
// rows (timed), then verification (not timed).
bool LoadPhase::iteration(std::vector<IterationTiming>* timings) {
  const CaseContext& context = s_.context;
  const Case& c = context.c;
  Comm& comm = context.comm;
  CaseRecorder& record = s_.record;
  CaseBuffers& data = s_.data;
  auto start = Clock::now();
  record.result.cache_policy_applied = comm.broadcast(apply_cache_policy(c.cache, [&data] {
    std::vector<backends::IoPlan> io;
    for (const RankPlan& p : data.read_plans) io.push_back(p.io);
    return io;
  }()));
  record.charge("cache drop", start);
  start = Clock::now();
  const FileRanges ranges = prepare_planned_load(data.read_plans, data.read_buffer, c.data);
  record.charge("zero buffers", start);
  const bool device = data.read_buffer.view().kind == backends::MemoryKind::device;
  MemorySpace& pool_space =
      context.run.memory.get(device ? MemorySpaceKind::pinned : MemorySpaceKind::host);
  if (c.load.cooperative) return cooperative_iteration(timings);
  comm.barrier();
  start = Clock::now();
  const CpuSeconds cpu = process_cpu_seconds();
  ProcessSample sample;
  CodecWork decoded;
  try {
    const LoadStorage storage{.backend = c.backend,
                              .options = c.backend_options,
                              .io = c.io,
                              .group = {comm.rank(), comm.size(), comm.mpi_handle()}};
    const LoadTiming t = load_planned(data.read_plans, ranges, data.read_buffer, c.load.settings,
                                      pool_space, storage, framed_);
    decoded = t.decode;
    if (!ranges.ranges.empty()) pool_chunks_ = t.pool_chunks;
    reads_ = t.reads;
    sample.copy_seconds = t.copy_seconds;
    sample.seconds = t.seconds;
    sample.counters = t.counters;
    sample.notes = t.notes;
  } catch (const std::exception& e) {
    sample.error = e.what();
  }
  CpuSeconds::charge_since(cpu, sample);
  if (!framed_.files.empty()) record_codec_work(s_, decoded, false, timings != nullptr);
  const IterationTiming timing = gather_timing(sample, comm);
  record.charge("load", start);
  record.add_notes(timing.notes);
  return finish_read(s_, "load", sample, timing, data.read_plans, data.read_buffer, c.verify,
                     timings);
}

// load.cooperative: each process's pieces read and exchanged (timed_piece_read), then the
// scatter of strided rows, timed together as the loader's load is.
bool LoadPhase::cooperative_iteration(std::vector<IterationTiming>* timings) {
  CaseBuffers& data = s_.data;
  const auto start = Clock::now();
  ProcessSample sample = timed_piece_read(s_, *s_.backend, data.read_buffer);
  if (sample.error.empty()) {
    const auto scatter = Clock::now();
    apply_reshard_copies(data.read_plans, buffer_offsets(data.read_plans, data.read_buffer),
                         data.read_buffer.memory());
    sample.seconds += seconds_since(scatter);
  }
  reads_ = 0;
  for (const RankPlan& round : data.exchange.staging) reads_ += round.io.extents();
  const IterationTiming timing = gather_timing(sample, s_.context.comm);
  s_.record.charge("load", start);
  return finish_read(s_, "load", sample, timing, data.read_plans, data.read_buffer,
                     s_.context.c.verify, timings);
}

void LoadPhase::record(const std::vector<IterationTiming>& loads) {
  const Case& c = s_.context.c;
  Comm& comm = s_.context.comm;
  LoadSummary s;
  const LoadSettings& settings = c.load.settings;
  s.method = std::string(load_method_name(settings.method));
  s.threads = settings.threads;
  s.direct = settings.direct;
  s.chunk_bytes = settings.chunk_bytes;
  s.pool_bytes = settings.pool_bytes;
  s.pool_chunks = pool_chunks_;
  s.memory = std::string(memory_space_name(c.memory_space));
  s.tp = c.load.inference.parallel.tp;
  s.checkpoint_tp = c.parallel.tp;
  s.ranks = s_.record.result.modeled_ranks;
  const LoadCounts mine = load_counts(s_.data.read_plans);
  s.bytes = comm.sum(mine.bytes_needed);
  s.bytes_read = comm.sum(mine.bytes_read);
  s.gap_bytes = c.load.inference.gap_bytes;
  s.bridged_bytes = comm.sum(mine.bridged_bytes);
  s.padding_bytes = comm.sum(mine.padding_bytes);
  s.requests = comm.sum(mine.requests);
  s.reads = comm.sum(reads_);
  for (const IterationTiming& t : loads) {
    s.time_to_loaded_seconds.push_back(t.seconds);
    s.h2d_seconds.push_back(t.copy_seconds);
  }
  s_.record.result.load = s;
}

}  // namespace ckpt::harness
