#include "harness/run/training_phase.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "harness/checkpoint/checkpoint_commit.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/engine/flush_worker.hpp"
#include "harness/engine/tier_copies.hpp"
#include "harness/engine/training_loop.hpp"
#include "harness/plan/training_state.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/run/codec_steps.hpp"
#include "harness/run/tier_recovery_step.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

namespace {

// Removes the loop's earlier checkpoints `old` on a thread of its own (deleting a large checkpoint
// takes longer than the commit), or here when no thread can be started (memory is short). The
// commit is complete by now: nothing here may fail it.
void retire_superseded(std::jthread& retire, CheckpointStore& store,
                       std::vector<fs::path>& old) noexcept {
  const auto remove = [&store](const std::vector<fs::path>& dirs) {
    for (const fs::path& dir : dirs) {
      try {
        store.remove_checkpoint(dir);
      } catch (...) {  // a checkpoint left over takes space; the commit stands
      }
    }
  };
  try {
    // A copy: when no thread can start (memory or threads short), `old` is still whole for the
    // removal here.
    retire = std::jthread([remove, dirs = old] { remove(dirs); });  // joins the previous
  } catch (...) {
    remove(old);
  }
}

// training.compute = "gpu": the kernel the loop's compute runs, else null.
std::unique_ptr<GpuLoad> gpu_load_of(const Case& c, Comm& comm) {
  std::unique_ptr<GpuLoad> gpu_load;
  if (c.training.compute != ComputeKind::gpu) return gpu_load;
  std::string no_load;
  try {
    gpu_load = make_gpu_load();
  } catch (const std::exception& e) {
    no_load = e.what();
  }
  if (const std::string first = comm.first_problem(no_load); !first.empty()) {
    throw SetupError(fmt::format("case {}: {}", c.index, first));
  }
  return gpu_load;
}

// engine.name = "tiered": the layout checked (the same refusal on every process), each node's
// local tier made and checked for room, and with tiers.memory the process's memory tier
// (`memory`, for `part_bytes`) allocated, before any I/O of the loop; nullopt for other engines.
std::optional<TierSetup> tier_setup_of(const Case& c, Comm& comm, std::uint64_t state_bytes,
                                       std::uint64_t part_bytes,
                                       std::optional<MemoryTier>& memory) {
  if (c.engine.kind != EngineKind::tiered) return std::nullopt;
  TierSetup setup = checked_tier_setup(c, comm, state_bytes);
  if (const std::string room = tier_capacity_problem(comm, setup, c.engine.tiers.local_bytes);
      !room.empty())
    throw SetupError(fmt::format("case {}: {}", c.index, room));
  if (!c.engine.tiers.memory) return setup;
  std::string short_of_memory;
  try {
    // With F > 1 it also holds the clique's F - 1 peers' parts (each at most the largest part).
    setup.memory = &memory.emplace(part_bytes, setup.layout.replicas() - 1, state_bytes);
  } catch (const std::exception& e) {
    short_of_memory = fmt::format("tiers.memory: {}; set tiers.memory = false", e.what());
  }
  if (const std::string first = comm.first_problem(short_of_memory); !first.empty())
    throw SetupError(fmt::format("case {}: {}", c.index, first));
  return setup;
}

}  // namespace

TrainingPhase::TrainingPhase(CaseState& state, WritePhase& write, RestorePhase& restore)
    : s_(state), write_(write), restore_(restore), chain_(state.context.c) {}

std::string TrainingPhase::commit(const fs::path& dir, std::int64_t iteration,
                                  const std::vector<std::vector<std::uint64_t>>& sums) {
  const CaseContext& context = s_.context;
  std::vector<fs::path> superseded{
      dir};  // allocated before the commit: once `latest` names dir, nothing may throw
  CommitTimes times;
  const bool chain = chain_.enabled();
  // A kept run names it `latest` at once, so a process killed later leaves it restorable; only
  // then does the newest committed checkpoint replace the loop's previous one.
  const std::string problem = commit_checkpoint(context.comm, s_.store.store(), context.c, dir,
                                                {.world_size = context.layout.world_size(),
                                                 .ranks = &context.selected,
                                                 .step = s_.store.step(iteration),
                                                 .training_iteration = iteration,
                                                 .name_latest = context.keeping(),
                                                 .carried = chain ? &chain_.carried() : nullptr},
                                                chain    ? chain_.plans()
                                                : codec_ ? codec_->stored()
                                                         : s_.data.write_plans,
                                                chain ? chain_.checksums() : sums, &times);
  if (chain) {
    if (context.comm.rank() == 0 && problem.empty())
      s_.record.timed.metadata.push_back(times.metadata_seconds);
    settle_chain(dir, iteration, problem.empty());
    return problem;
  }
  if (context.comm.rank() == 0 && problem.empty()) {
    // The coordinator files' seconds (inside the checkpoint's time to durable) go to
    // phases.write.metadata's samples.
    s_.record.timed.metadata.push_back(times.metadata_seconds);
    committed_dir_.swap(superseded.front());
    if (!superseded.front().empty() && superseded.front() != dir)
      retire_superseded(retire_, s_.store.store(), superseded);
  }
  return problem;
}

const std::vector<RankPlan>& TrainingPhase::reduce(
    std::int64_t iteration, const fs::path& dir,
    const std::vector<std::vector<std::uint64_t>>& sums) {
  const Case& c = s_.context.c;
  // The manifest records each piece's key before any update (a restore applies its iteration's);
  // the delta model's update is the blocks' step, which the changed runs are of.
  const std::vector<RankPlan>& plans = s_.data.write_plans;
  const std::int64_t turn = iteration / c.training.checkpoint_every;  // the loop's checkpoint count
  if (!c.selective.delta()) {
    chain_.choose(plans, sums, turn, iteration + 1, dir);
  } else {
    chain_.choose(plans_at_iteration(plans, iteration), sums, turn, iteration + 1, dir);
  }
  return chain_.plans();
}

void TrainingPhase::settle_chain(const fs::path& dir, std::int64_t iteration, bool kept) {
  Comm& comm = s_.context.comm;
  const std::set<std::string> needed = kept ? chain_.needed(comm) : std::set<std::string>{};
  chain_.settle(dir, kept, iteration);
  if (!kept) return;
  chain_.record(comm, needed, dir, s_.record.result.bytes_per_checkpoint,
                s_.record.result.selective);
  if (comm.rank() != 0) return;
  std::vector<fs::path> unneeded;
  for (const fs::path& old : chain_dirs_) {
    if (old != dir && !needed.contains(old.filename().string())) unneeded.push_back(old);
  }
  for (const fs::path& old : unneeded) chain_dirs_.erase(old);
  chain_dirs_.insert(dir);
  committed_dir_ = dir;
  if (!unneeded.empty()) retire_superseded(retire_, s_.store.store(), unneeded);
}

// As the write phase does for its checkpoints: the seconds until another process sees the
// committed checkpoint, where the store lets one look (an object store, or a file system under
// several processes).
void TrainingPhase::observe_commit(const fs::path& dir) {
  if (!s_.store.observes_visibility()) return;
  if (const auto seconds = s_.store.time_until_visible(dir, *s_.backend))
    s_.record.result.visible_seconds.push_back(*seconds);
}

void TrainingPhase::run(std::vector<IterationTiming>& reads) {
  const Case& c = s_.context.c;
  Comm& comm = s_.context.comm;
  CaseRecorder& record = s_.record;
  const auto state_bytes = static_cast<std::uint64_t>(
      comm.max(static_cast<double>(s_.data.write_buffer.memory().size())));
  const auto problem =
      engine_problem(c, s_.backend->capabilities(), state_bytes, comm.thread_level()).value_or("");
  if (const std::string first = comm.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: {}", c.index, first));
  }
  const std::unique_ptr<GpuLoad> gpu_load = gpu_load_of(c, comm);
  std::optional<MemoryTier> memory_tier;  // tiers.memory: outlives the loop for the recovery
  const std::optional<TierSetup> tiers =
      tier_setup_of(c, comm, state_bytes, s_.data.write_buffer.memory().size(), memory_tier);
  if (c.compression.enabled()) codec_.emplace(c, s_.data.stored_buffer);
  TrainingIo::Reduce reduce;
  if (chain_.enabled()) {
    reduce = [this](std::int64_t iteration, const fs::path& dir,
                    const std::vector<std::vector<std::uint64_t>>& sums)
        -> const std::vector<RankPlan>& { return this->reduce(iteration, dir, sums); };
  }
  TrainingIo io{.comm = comm,
                .backend = *s_.backend,
                .plans = s_.data.write_plans,
                .planned_dir = s_.data.planned_dir,
                .state = s_.data.write_buffer,
                .pattern = c.data,
                .claim_dir =
                    [this](std::int64_t iteration, fs::path& dir) {
                      return s_.store.claim(static_cast<int>(iteration), dir)
                                 ? std::string()
                                 : s_.record.result.error;
                    },
                .commit =
                    [this](const fs::path& dir, std::int64_t iteration,
                           const std::vector<std::vector<std::uint64_t>>& sums) {
                      return commit(dir, iteration, sums);
                    },
                .observe_commit = [this](const fs::path& dir) { observe_commit(dir); },
                .discard = [this](const fs::path& dir) { return s_.store.discard(dir); },
                .interrupted = &s_.context.run.interrupted,
                .gpu_load = gpu_load.get(),
                .gather = write_.sync_gather(),  // per_dp: nothing to gather
                .tiers = tiers ? &*tiers : nullptr,
                .codec = codec_ ? &*codec_ : nullptr,
                .reduce = std::move(reduce)};
  const auto start = Clock::now();
  try {
    record.result.training = run_training(c.training, c.engine, io);
  } catch (const std::invalid_argument&) {
    throw;  // a setup problem found before any I/O
  } catch (...) {
    // Memory or threads short before any checkpoint (the host pool), or with other processes
    // (they all end: the caller).
    retire_ = std::jthread();
    if (comm.size() > 1) throw;
    record.fail(fmt::format("training loop: {}", describe_exception(std::current_exception())));
    return;
  }
  retire_ = std::jthread();  // the last removal done
  record.charge("training", start);
  const TrainingSummary& t = *record.result.training;
  if (codec_) record_encodes(t);
  if (!t.error.empty()) record.fail(t.error);
  if (t.interrupted && record.ok()) {
    record.result.status = "interrupted";
    record.result.error =
        "interrupted by a signal; the in-flight checkpoint was finished and committed";
  }
  // tiers.lost_nodes: the recovery from the tiers replaces the restore from the backend.
  const bool recovering =
      tiers && !c.engine.tiers.lost_nodes.empty() && s_.context.phase != PhaseSelection::checkpoint;
  if (t.committed_iteration >= 0) after_loop(io.plans, io.planned_dir, reads, recovering);
  if (recovering && record.ok() && !t.interrupted) {
    recover_lost_nodes(s_, *tiers, io.plans, io.planned_dir,
                       {.iteration = t.committed_iteration, .dir = t.committed_dir}, false, reads);
    if (t.committed_iteration >= 0) s_.store.retire(t.committed_dir, true);
  }
}

void TrainingPhase::record_encodes(const TrainingSummary& t) {
  const std::vector<CodecWork>& work = codec_->work();
  for (std::size_t i = 0; i < t.checkpoints.size(); ++i) {
    if (t.checkpoints[i].committed)
      record_codec_work(s_, i < work.size() ? work[i] : CodecWork{}, true, true);
  }
}

void TrainingPhase::after_loop(const std::vector<RankPlan>& trained, const fs::path& trained_dir,
                               std::vector<IterationTiming>& reads, bool recovering) {
  const TrainingSummary& t = *s_.record.result.training;
  CaseRecorder& record = s_.record;
  CaseBuffers& data = s_.data;
  const fs::path dir = t.committed_dir;
  data.write_plans = plans_at_iteration(trained, t.committed_iteration);
  retarget(data.write_plans, trained_dir, dir);
  if (!data.read_plans.empty())
    data.read_plans = plans_at_iteration(data.read_plans, t.committed_iteration);
  retarget(data.read_plans, data.planned_dir, dir);
  data.planned_dir = dir;
  // The newest compressed checkpoint is the committed one: a later one failed the run.
  if (codec_) data.stored_plans = codec_->stored();
  record.result.checkpoint_dir = dir.string();
  if (s_.context.phase == PhaseSelection::checkpoint) {
    // `latest` already names it (the loop's commit); after a failure, recording it again could
    // only replace the failure's message with its own.
    if (record.result.status != "failed")
      s_.store.name_latest(dir, s_.store.step(t.committed_iteration));
    s_.store.retire(dir, true);
  } else if (record.ok() && !recovering) {
    restore_.iteration(0, &reads);
  } else if (t.interrupted && s_.context.keeping() && record.result.status == "interrupted") {
    s_.store.retire(dir, true);  // as a finished run's restore would: what it superseded goes
  }
}

}  // namespace ckpt::harness
