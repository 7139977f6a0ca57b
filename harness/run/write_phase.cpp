#include "harness/run/write_phase.hpp"

#include <fmt/format.h>

#include "harness/checkpoint/checkpoint_commit.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/plan/framework_shards.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/run/case_setup.hpp"
#include "harness/run/codec_steps.hpp"
#include "harness/run/process_memory.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

WritePhase::WritePhase(CaseState& state) : s_(state), chain_(state.context.c) {}

void WritePhase::prepare() {
  const CaseContext& context = s_.context;
  const Case& c = context.c;
  Comm& comm = context.comm;
  CaseBuffers& data = s_.data;
  s_.store.open();
  s_.store.prepare_target();
  s_.store.lock();
  s_.store.continue_numbering();
  data.planned_dir = s_.store.step_dir(0);
  ProcessPlans plans = plan_process(context.layout, c, context.phase, context.selected, comm.rank(),
                                    comm.size(), data.planned_dir);
  // per_dp writes each DP rank's optimizer shard where it is held: nothing travels.
  gathers_ = c.megatron_optimizer == MegatronOptimizer::gathered &&
             gathers_distributed_optimizer(c, context.layout);  // [training]: sync only
  if (gathers_)
    gather_ = DpGather(context.layout, c, context.selected, comm.rank(), comm.size(), plans.write,
                       data.planned_dir);
  check_memory(s_, process_memory_bytes(c, plans, gather_));
  data.write_plans = std::move(plans.write);
  data.read_plans = std::move(plans.read);
  MemorySpace& space = case_memory_space(s_);
  const auto start = Clock::now();
  if (c.reuse_bytes > 0) {
    if (gathers_)
      throw SetupError(
          fmt::format("case {}: memory.reuse_bytes cannot hold the gathered distributed "
                      "optimizer: set strategy.megatron_optimizer = \"per_dp\"",
                      c.index));
    reuse_buffers(s_, space, true);
  } else {
    data.write_buffer = ProcessBuffer(data.write_plans, space);
    if (!data.read_plans.empty()) data.read_buffer = ProcessBuffer(data.read_plans, space);
    prepare_stored(s_, plans, space);
    s_.record.add_notes(space.notes());
    if (gathers_) {
      // Each DP rank generates its own shards; DP rank 0's copies of the others' arrive by the
      // gather.
      gather_.prepare(space, c.data);
      fill_plans(gather_.fill_held_only(data.write_plans), data.write_buffer, c.data);
      checksummed_ = false;
    } else {
      data.checksums = fill_plans(data.write_plans, data.write_buffer, c.data);
    }
  }
  if (c.selective.delta()) {
    for (RankPlan& plan : data.write_plans) {
      for (PlacedShard& shard : plan.shards)
        shard.updates = {c.selective.block_bytes, c.selective.changed_per_million, 0};
    }
  }
  s_.record.result.fill_seconds = comm.max(seconds_since(start));
  s_.record.charge("fill", start);
  record_sizes(s_, data.write_plans);
}

void WritePhase::update_state(std::int64_t step) {
  CaseBuffers& data = s_.data;
  const auto start = Clock::now();
  for (RankPlan& plan : data.write_plans) {
    for (PlacedShard& shard : plan.shards) shard.updates.step = step;
  }
  const std::vector<PatternRange> changed = shard_pattern_ranges(
      data.write_plans, buffer_offsets(data.write_plans, data.write_buffer), nullptr, buffer_step_);
  if (!changed.empty()) data.write_buffer.memory().fill(changed, s_.context.c.data);
  data.checksums = shard_checksums(data.write_plans, data.write_buffer);
  buffer_step_ = step;
  s_.record.charge("fill", start);
}

// Megatron gathers the distributed optimizer onto DP rank 0 before it saves; its own phase, timed
// from a barrier to the slowest process's end.
double WritePhase::gather() {
  Comm& comm = s_.context.comm;
  comm.barrier();
  const auto start = Clock::now();
  const GatherCounts counts = gather_.run(comm, s_.data.write_buffer);
  const double seconds = comm.max(seconds_since(start));
  s_.record.timed.gathered = {comm.sum(counts.received_bytes), comm.sum(counts.local_bytes)};
  if (!checksummed_) {
    s_.data.checksums = shard_checksums(s_.data.write_plans, s_.data.write_buffer);
    checksummed_ = true;
  }
  return seconds;
}

DpGather* WritePhase::sync_gather() {
  return gathers_ && s_.context.c.engine.kind == EngineKind::sync ? &gather_ : nullptr;
}

// strategy.compression: the frames, their sizes deciding the plan's file offsets;
// strategy.selective_every, partial_experts: the pieces (their frames) due in the rotation, or
// without a kept copy; delta_every: the whole state (a base) or the runs changed since the base;
// else the whole state.
const std::vector<RankPlan>& WritePhase::to_write(int iteration, const fs::path& dir, bool timed) {
  CaseBuffers& data = s_.data;
  // A compressed delta compresses its changed runs alone, not the whole state.
  const bool runs = s_.context.c.compression.enabled() && chain_.delta_due();
  const bool compressed = s_.context.c.compression.enabled() && !runs;
  if (compressed) compress_for_write(s_, timed);
  const std::vector<RankPlan>& full = compressed ? data.stored_plans : data.write_plans;
  if (!chain_.enabled()) return full;
  const RunFrames frames{data.write_buffer, data.stored_buffer};
  chain_.choose(full, data.checksums, iteration, s_.store.step(iteration), dir,
                runs ? &frames : nullptr);
  if (runs) record_codec_work(s_, chain_.run_work(), true, timed);
  return chain_.plans();
}

bool WritePhase::iteration(int iteration, std::vector<IterationTiming>* timings) {
  const CaseContext& context = s_.context;
  Comm& comm = context.comm;
  CaseRecorder& record = s_.record;
  CaseBuffers& data = s_.data;
  if (context.c.selective.delta()) update_state(s_.store.step(iteration));
  // The step directory is claimed before the clock (one mkdir by process 0); the directories
  // below it are made inside the timed transfer. Its wall time counts as "checkpoint".
  fs::path dir;
  auto start = Clock::now();
  if (!s_.store.claim(iteration, dir)) return false;
  data.move_to(dir);
  const double gather_seconds = gathers_ ? gather() : 0.0;
  const bool compressed = context.c.compression.enabled();
  const std::vector<RankPlan>& written = to_write(iteration, dir, timings != nullptr);
  const ProcessSample sample = timed_transfer(
      *s_.backend, written, compressed ? data.stored_buffer : data.write_buffer, true, comm);
  const IterationTiming timing = gather_timing(sample, comm);
  record.charge("checkpoint", start);
  record.add_notes(timing.notes);
  if (!comm.all(sample.error.empty())) {
    const std::string error = comm.broadcast(timing.first_error);
    return record.fail(
        fmt::format("checkpoint {} failed: {} — {}; earlier complete checkpoints are untouched",
                    dir.string(), error, s_.store.discard(dir)));
  }
  start = Clock::now();
  // A --phase checkpoint run names each timed checkpoint `latest` as it commits it; --phase both
  // only once its restore verified (RestorePhase).
  const bool name_latest = context.phase == PhaseSelection::checkpoint && timings != nullptr;
  CommitTimes commit;
  const std::string problem =
      commit_checkpoint(comm, s_.store.store(), context.c, dir,
                        {.world_size = context.layout.world_size(),
                         .ranks = &context.selected,
                         .step = s_.store.step(iteration),
                         .name_latest = name_latest,
                         .carried = chain_.enabled() ? &chain_.carried() : nullptr},
                        written, chain_.enabled() ? chain_.checksums() : data.checksums, &commit);
  if (!problem.empty()) {
    record.charge("commit", start);
    return record.fail(fmt::format("{} — {}; earlier complete checkpoints are untouched", problem,
                                   s_.store.discard(dir)));
  }
  const auto bytes = static_cast<double>(record.result.bytes_per_checkpoint);
  record.report.write_gib_s = bytes / timing.seconds / kGiB;
  record.report.write_seconds = timing.seconds;
  if (timings != nullptr) {
    timings->push_back(timing);
    record.timed.manifest.push_back(commit.manifest_seconds);
    record.timed.metadata.push_back(commit.metadata_seconds);
    if (gathers_) record.timed.gather.push_back(gather_seconds);
  }
  if (name_latest) record.result.checkpoint_dir = dir.string();
  if (timings != nullptr && s_.store.observes_visibility()) {
    if (const auto seconds = s_.store.time_until_visible(dir, *s_.backend))
      record.result.visible_seconds.push_back(*seconds);
  }
  record.charge("commit", start);
  retire(dir, timings != nullptr);
  return true;
}

void WritePhase::retire(const fs::path& dir, bool timed) {
  const bool retiring = s_.context.phase == PhaseSelection::checkpoint;
  if (!chain_.enabled()) {
    if (retiring) s_.store.retire(dir, timed);
    return;
  }
  Comm& comm = s_.context.comm;
  const std::set<std::string> needed = chain_.needed(comm);
  chain_.settle(dir, !retiring || s_.store.retire(dir, timed, needed));
  if (timed)
    chain_.record(comm, needed, dir, s_.record.result.bytes_per_checkpoint,
                  s_.record.result.selective);
}

}  // namespace ckpt::harness
