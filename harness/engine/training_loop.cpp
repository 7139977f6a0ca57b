#include "harness/engine/training_loop.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

#include "harness/common/elapsed.hpp"
#include "harness/engine/flush_worker.hpp"
#include "harness/engine/host_pool.hpp"
#include "harness/engine/memory_reserve.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/memory/staging.hpp"
#include "harness/plan/training_state.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

Clock::time_point after(Clock::time_point start, double seconds) {
  return start +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Compute and update wait in slices of this length, polling for a finished flush between them;
// the slice count is the same on every process, so the polls match up.
constexpr double kPollSeconds = 0.02;

// Room kept for failing cleanly when memory runs out (MemoryReserve): the failed checkpoint's
// removal and message, the results record; a manifest's JSON is of this order.
constexpr std::size_t kMemoryReserveBytes = std::size_t{8} << 20;

// Collective: every process's counters summed, on every process.
std::map<std::string, std::uint64_t> sum_counters(
    Comm& comm, const std::map<std::string, std::uint64_t>& mine) {
  nlohmann::json total = nlohmann::json::object();
  if (const std::vector<std::string> all = comm.gather(nlohmann::json(mine).dump());
      comm.rank() == 0) {
    std::map<std::string, std::uint64_t> sum;
    for (const std::string& text : all) {
      const nlohmann::json counts = nlohmann::json::parse(text);
      for (const auto& [name, count] : counts.items()) sum[name] += count.get<std::uint64_t>();
    }
    total = sum;
  }
  return nlohmann::json::parse(comm.broadcast(total.dump()))
      .get<std::map<std::string, std::uint64_t>>();
}

// A checkpoint between its due point and its commit (async, lazy).
struct InFlight {
  std::size_t record = 0;  // index into the summary's checkpoints
  fs::path dir;
  Checksums sums;
  Clock::time_point due;
  bool drain = true;  // tiered: also written through the backend and committed there
};

class TrainingRun {
 public:
  TrainingRun(const TrainingSpec& t, const EngineSpec& e, TrainingIo& io, const EngineHooks& hooks)
      : t_(t), e_(e), io_(io), hooks_(hooks) {
    if (t.compute == ComputeKind::gpu && io.gpu_load == nullptr) {
      throw std::invalid_argument("training.compute = \"gpu\": the loop was given no GPU load");
    }
    summary_.engine = std::string(engine_name(e.kind));
    if (e.kind == EngineKind::tiered) {
      if (io.tiers == nullptr)
        throw std::invalid_argument("engine.name = \"tiered\": the loop was given no tier setup");
      summary_.tiers = tier_layout_record(*io.tiers);
    }
    if (io.gather != nullptr && e.kind != EngineKind::sync) {
      throw std::invalid_argument(
          "the DP gather of Megatron's gathered optimizer runs only under engine.name = \"sync\"");
    }
    if (e.kind != EngineKind::sync) {
      pool_.emplace(io.state.memory(), e.host_pool_bytes);
      summary_.host_pool_bytes = pool_->capacity();
      if (const ChunkRing* ring = pool_->ring()) {
        summary_.pool_chunk_bytes = ring->geometry().chunk_bytes;
        summary_.pool_chunks = ring->geometry().slots;
        for (std::size_t r = 0; r < io.plans.size();
             ++r) {  // the cuts are the same for every checkpoint
          chunks_.push_back(split_plan(io.plans[r].io, ring->geometry().chunk_bytes));
          chunk_bases_.push_back(io.state.offset(r));
        }
      }
    }
    if (io.reduce &&
        (e.kind == EngineKind::tiered || (pool_ && pool_->ring()) || io.codec != nullptr)) {
      throw std::invalid_argument(
          "selective and delta checkpoints run under sync, async and lazy with a whole host pool "
          "and no compression only");
    }
    if (io.codec != nullptr && (e.kind == EngineKind::tiered || (pool_ && pool_->ring()))) {
      throw std::invalid_argument(
          "strategy.compression runs under sync, async and lazy with a whole host pool only");
    }
  }

  TrainingSummary run();

 private:
  bool ok() const { return summary_.error.empty(); }
  void fail(const std::string& problem) {
    if (summary_.error.empty()) summary_.error = problem;
  }
  // Collective: the checkpoint whose directory was claimed failed; the directory goes.
  void fail_checkpoint(const std::string& problem);
  // Runs `local` (no collective inside); an exception it throws becomes this process's problem,
  // which the next agree_local makes everyone's.
  void guard(const std::function<void()>& local) noexcept;
  // Collective: the first process's problem from guard, if any, fails the run (and the claimed
  // checkpoint, whose directory goes). False when it did.
  bool agree_local();
  void loop();
  // After an exception on this thread: the flush thread stopped and joined; a checkpoint it
  // committed meanwhile is recorded, any other result dropped.
  void stop_worker() noexcept;
  void wait_for(Clock::time_point start, double seconds);
  void compute_until(Clock::time_point end);
  void update(std::int64_t iteration);
  void checkpoint(std::int64_t iteration);
  void checkpoint_sync(std::int64_t iteration, Clock::time_point due);
  double observe(const fs::path& dir);  // io_.observe_commit, when set; returns its seconds
  double gather(std::int64_t iteration, CheckpointRecord& record);
  void checkpoint_background(std::int64_t iteration, Clock::time_point due);
  // The flush of `written` (plans over the state's buffer places: the loop's, or reduced ones).
  FlushTarget flush_target(std::int64_t iteration, const fs::path& dir,
                           const std::vector<RankPlan>& written) const;
  // This process's part of a checkpoint whose directory `dir` was claimed: its plans moved there.
  void prepare_checkpoint(std::int64_t iteration, const fs::path& dir);
  FlushJob flush_job(std::int64_t iteration, const fs::path& dir, bool drain,
                     const std::vector<RankPlan>& written);
  // tiered: whether the checkpoint now due goes to the backend too (every K-th).
  bool drains() const;
  // tiered, after the flush of `flight` was collected without error: its tier times and bytes,
  // each node's mark that its copy is complete, and which tiers hold it.
  void record_tiers(CheckpointRecord& record, const InFlight& flight);
  // The snapshot copy of the state as it is now into the pool (async on this thread, lazy on the
  // worker); `tear`: the next iteration's update halfway through (EngineHooks).
  void copy_snapshot(std::int64_t iteration, bool tear) const;
  // Commits the in-flight checkpoint when every process's flush finished (block: wait for it).
  void poll(bool block, bool may_commit = true);
  void commit(const fs::path& dir, std::int64_t iteration, const Checksums& sums,
              CheckpointRecord& record, Clock::time_point due);
  void record_commit(CheckpointRecord& record, const fs::path& dir, double durable_seconds);
  void reduce_records();
  // `t` in seconds from the loop's start (the timeline's clock).
  double at(Clock::time_point t) const {
    return std::chrono::duration<double>(t - loop_start_).count();
  }
  TimeSpan span(Clock::time_point start, double seconds) const {
    return {at(start), at(start) + seconds};
  }

  // First, so that it outlives everything the loop allocates.
  MemoryReserve reserve_{kMemoryReserveBytes};
  const TrainingSpec& t_;
  const EngineSpec& e_;
  TrainingIo& io_;
  const EngineHooks& hooks_;
  TrainingSummary summary_;
  std::optional<HostPool> pool_;
  FlushWorker worker_;
  std::optional<InFlight> in_flight_;
  std::optional<fs::path> pending_dir_;  // claimed, not yet committed or discarded
  std::string local_problem_;            // this process's, from guard; not yet agreed on
  Checksums sums_;                       // of the state as the last update left it
  bool lazy_copy_pending_ = false;       // lazy: the next update must wait for the snapshot copy
  std::optional<std::size_t> polled_record_;  // committed by a poll during the current wait_for
  double polled_commit_seconds_ = 0;          // how long that commit took
  double last_commit_seconds_ = 0;            // the slowest process's time of the last commit
  double observed_seconds_ = 0;               // observe() of the last commit() (main thread)
  std::vector<std::uint64_t> flush_bytes_;    // per record: this process's bytes
  std::map<std::string, std::uint64_t> flush_counters_;  // this process's flushes' counters
  std::vector<std::vector<StagedPart>> chunks_;  // ring: each plan cut into the ring's chunks
  std::vector<std::uint64_t> chunk_bases_;       // ring: each plan's offset in the state
  TierProgress tier_progress_;                   // tiered: the flush thread's, read after its join
  Clock::time_point loop_start_ = Clock::now();
};

// The compute of training.compute until `end`: sleep, spin a core, or keep the GPU busy.
void TrainingRun::compute_until(Clock::time_point end) {
  switch (t_.compute) {
    case ComputeKind::sleep:
      std::this_thread::sleep_until(end);
      return;
    case ComputeKind::spin:
      while (Clock::now() < end) {
      }
      return;
    case ComputeKind::gpu:
      try {
        io_.gpu_load->run_for(std::chrono::duration<double>(end - Clock::now()).count());
      } catch (const std::exception& e) {
        fail(fmt::format("training.compute = \"gpu\": {}", e.what()));
        std::this_thread::sleep_until(end);  // the other processes' polls still match
      }
      return;
  }
}

// Waits until `seconds` after `start` in slices whose count depends on `seconds` alone, so
// that every process polls (a collective) equally often.
void TrainingRun::wait_for(Clock::time_point start, double seconds) {
  const auto slices =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(seconds / kPollSeconds)));
  for (std::int64_t k = 1; k <= slices; ++k) {
    const Clock::time_point end =
        after(start, seconds * static_cast<double>(k) / static_cast<double>(slices));
    compute_until(end);
    // Commit only with the time a commit takes (the last one's) left in this wait, so that it
    // hides in compute instead of lengthening the iteration; every process still polls.
    const Clock::time_point wait_end = after(start, seconds);
    if (k < slices) poll(false, after(Clock::now(), last_commit_seconds_) < wait_end);
  }
  // A commit made during the wait holds the loop only where it ran past the wait's end (and
  // never by more than it took: an update slower than its share is not the checkpoint's doing).
  if (const double over = seconds_since(after(start, seconds)); over > 0 && polled_record_) {
    summary_.checkpoints[*polled_record_].stall_seconds += std::min(over, polled_commit_seconds_);
  }
  polled_record_.reset();
}

// The optimizer update: every shard rewritten as this iteration's state, then the rest of the
// update's share of the iteration waited out.
void TrainingRun::update(std::int64_t iteration) {
  const auto start = Clock::now();
  poll(false);  // a flush that ended during compute commits now, not after the rewrite
  guard([this, iteration] {
    const std::vector<RankPlan> state = plans_at_iteration(io_.plans, iteration);
    if (io_.gather != nullptr) {
      // Each DP rank updates its own shards; DP rank 0's copies of the others' come by the gather
      // at the checkpoint (checksummed there, once they arrived).
      fill_plans(io_.gather->fill_held_only(state), io_.state, io_.pattern);
      io_.gather->fill_sources(io_.pattern, iteration);
    } else {
      sums_ = fill_plans(state, io_.state, io_.pattern);
    }
  });
  wait_for(start, t_.iteration_seconds * t_.update_fraction);
}

void TrainingRun::fail_checkpoint(const std::string& problem) {
  fail(problem);
  if (!pending_dir_ || !io_.discard) return;
  const fs::path dir = std::move(*pending_dir_);
  pending_dir_.reset();
  summary_.error +=
      fmt::format(" — {}; earlier complete checkpoints are untouched", io_.discard(dir));
}

void TrainingRun::guard(const std::function<void()>& local) noexcept {
  try {
    local();
  } catch (...) {
    if (local_problem_.empty()) {
      try {
        const std::string what = describe_exception(std::current_exception());
        local_problem_ =
            io_.comm.size() > 1 ? fmt::format("process {}: {}", io_.comm.rank(), what) : what;
      } catch (...) {
        local_problem_ = "out of memory";  // even the message could not be made
      }
    }
  }
}

bool TrainingRun::agree_local() {
  const std::string problem = io_.comm.first_problem(local_problem_);
  local_problem_.clear();
  if (problem.empty()) return true;
  if (in_flight_) {
    // The checkpoint in flight holds a whole snapshot: it is committed when the loop ends, as after
    // any other failure.
    fail(fmt::format("training loop: {}", problem));
  } else {
    fail_checkpoint(pending_dir_
                        ? fmt::format("checkpoint {} failed: {}", pending_dir_->string(), problem)
                        : fmt::format("training loop: {}", problem));
  }
  return false;
}

void TrainingRun::stop_worker() noexcept {
  if (!worker_.busy()) return;
  try {
    if (ChunkRing* ring = pool_->ring())
      ring->close();  // a copy or write waiting for the other side ends
    const FlushResult result = worker_.collect();
    if (result.committed && in_flight_) {
      pending_dir_.reset();  // committed on the flush thread (`latest` may name it): it stays
      record_commit(summary_.checkpoints[in_flight_->record], in_flight_->dir,
                    seconds_since(in_flight_->due));
    }
  } catch (
      ...) {  // the join is done; only describing its error failed (then nothing was committed)
  }
  in_flight_.reset();
}

TrainingSummary TrainingRun::run() {
  loop_start_ = Clock::now();
  try {
    loop();
    agree_local();  // a failure of the last updates
  } catch (...) {
    stop_worker();
    // Another process may wait in a collective: only a single process can go on and report it;
    // with others, the caller ends them all.
    if (io_.comm.size() > 1) throw;
    const std::string what = describe_exception(std::current_exception());
    fail_checkpoint(pending_dir_
                        ? fmt::format("checkpoint {} failed: {}", pending_dir_->string(), what)
                        : fmt::format("training loop: {}", what));
  }
  summary_.loop_seconds = seconds_since(loop_start_);
  reduce_records();
  return std::move(summary_);
}

void TrainingRun::loop() {
  for (std::int64_t i = 0; i < t_.iterations && ok(); ++i) {
    const auto start = Clock::now();
    const bool flushing = worker_.busy();
    wait_for(start, t_.iteration_seconds * (1 - t_.update_fraction));
    IterationTimes times{.start = at(start), .compute_end = at(Clock::now())};
    times.update_start = times.compute_end;  // no wait for a copy: the update follows at once
    double stalled = 0;
    if (lazy_copy_pending_) {
      const auto wait_start = Clock::now();
      worker_.wait_snapshot();  // DataStates' rule: the state may change only once the copy is done
      stalled = seconds_since(wait_start);
      if (in_flight_) summary_.checkpoints[in_flight_->record].stall_seconds += stalled;
      lazy_copy_pending_ = false;
      times.update_start = at(Clock::now());
    }
    update(i);
    times.end = at(Clock::now());
    summary_.iteration_times.push_back(times);
    const double busy = seconds_since(start) - stalled;
    (flushing || worker_.busy() ? summary_.flushing_iteration_seconds
                                : summary_.plain_iteration_seconds)
        .push_back(busy);
    if ((i + 1) % t_.checkpoint_every == 0 && ok() && agree_local()) checkpoint(i);
    if (io_.interrupted != nullptr && !io_.comm.all(!io_.interrupted->load())) {
      summary_.interrupted = true;  // the rule: the in-flight flush is finished and committed below
      break;
    }
  }
  if (in_flight_) poll(true);
}

void TrainingRun::checkpoint(std::int64_t iteration) {
  const auto due = Clock::now();
  const std::size_t index = summary_.checkpoints.size();
  summary_.checkpoints.push_back({.iteration = iteration});
  summary_.checkpoints.back().times.due = at(due);
  flush_bytes_.push_back(0);
  if (e_.kind == EngineKind::sync) {
    checkpoint_sync(iteration, due);
  } else {
    checkpoint_background(iteration, due);
  }
  // Gone when back-pressure found the previous checkpoint failed (this one never started).
  if (index >= summary_.checkpoints.size()) return;
  CheckpointRecord& record = summary_.checkpoints[index];
  record.times.resumed = at(Clock::now());
  // The sync loop stood still from due to resumed: its stall is read off the two times the
  // timeline draws, so that the two cannot disagree.
  if (e_.kind == EngineKind::sync) record.stall_seconds = record.times.resumed - record.times.due;
  if (e_.kind == EngineKind::sync && record.committed) observe(summary_.committed_dir);
}

double TrainingRun::observe(const fs::path& dir) {
  if (!io_.observe_commit) return 0;
  const auto start = Clock::now();
  io_.observe_commit(dir);
  return seconds_since(start);
}

void TrainingRun::checkpoint_sync(std::int64_t iteration, Clock::time_point due) {
  fs::path dir;
  if (const std::string problem = io_.claim_dir(iteration, dir); !problem.empty())
    return fail(problem);
  pending_dir_ = dir;
  guard([&] { prepare_checkpoint(iteration, dir); });
  if (!agree_local()) return;
  CheckpointRecord& record = summary_.checkpoints.back();
  // The checksums taken after a gather are the harness's bookkeeping, not the loop's: the stall,
  // the time to durable and the timeline's due point all start that much later, so that the
  // timeline's figures are the record's.
  if (io_.gather != nullptr) {
    due = after(due, gather(iteration, record));
    record.times.due = at(due);
  }
  const auto flush_start = Clock::now();
  // strategy.compression: the frames, compressed inline (inside the stall), are what is written.
  FlushCodec* codec = io_.codec;
  if (codec != nullptr) {
    guard([&] { codec->compress(io_.plans, io_.state, io_.state.view().data); });
    if (!agree_local()) return;
    codec->record(summary_.checkpoints.size() - 1);
  }
  const std::vector<RankPlan>* reduced = nullptr;
  if (io_.reduce) {
    guard([&] { reduced = &io_.reduce(iteration, dir, sums_); });
    if (!agree_local()) return;
  }
  const std::vector<RankPlan>& written = codec != nullptr     ? codec->stored()
                                         : reduced != nullptr ? *reduced
                                                              : io_.plans;
  const ProcessSample sample = timed_transfer(
      io_.backend, written, codec != nullptr ? codec->frames() : io_.state, true, io_.comm);
  record.flush_seconds = sample.seconds + (codec != nullptr ? codec->last().seconds : 0.0);
  record.times.flush = {at(flush_start), at(Clock::now())};
  for (const RankPlan& p : written) flush_bytes_.back() += p.io.bytes();
  for (const auto& [name, count] : sample.counters) flush_counters_[name] += count;
  if (const std::string problem = io_.comm.first_problem(
          sample.error.empty() ? ""
                               : fmt::format("checkpoint of iteration {} ({}): {}", iteration,
                                             dir.string(), sample.error));
      !problem.empty()) {
    return fail_checkpoint(problem);
  }
  commit(dir, iteration, sums_, record, due);
}

// Megatron's DP gather onto DP rank 0 (DpGather), timed from a barrier to the slowest process's
// end, inside the checkpoint's stall. Returns the seconds of the checksums taken after it: the
// harness's bookkeeping (without a gather they are taken in the update), kept out of the stall.
double TrainingRun::gather(std::int64_t iteration, CheckpointRecord& record) {
  io_.comm.barrier();
  const auto start = Clock::now();
  const GatherCounts counts = io_.gather->run(io_.comm, io_.state);
  record.gather_seconds = seconds_since(start);  // reduce_records: the slowest process's
  summary_.gather_bytes = io_.comm.sum(counts.received_bytes);
  summary_.gather_local_bytes = io_.comm.sum(counts.local_bytes);
  const auto sums_start = Clock::now();
  sums_ = shard_checksums(plans_at_iteration(io_.plans, iteration), io_.state);
  return seconds_since(sums_start);
}

void TrainingRun::prepare_checkpoint(std::int64_t iteration, const fs::path& dir) {
  if (iteration == hooks_.throw_after_claim && io_.comm.rank() == hooks_.throw_process)
    throw std::bad_alloc();
  retarget(io_.plans, io_.planned_dir, dir);
  io_.planned_dir = dir;
}

FlushTarget TrainingRun::flush_target(std::int64_t iteration, const fs::path& dir,
                                      const std::vector<RankPlan>& written) const {
  FlushTarget target;
  target.what = fmt::format("checkpoint of iteration {} ({})", iteration, dir.string());
  target.parts = chunks_;
  for (const RankPlan& plan : written) {
    target.plans.push_back(plan.io);
    target.ranks.push_back(plan.rank);
  }
  if (pool_->ring() == nullptr) {
    const backends::MemoryView pool = pool_->view();
    for (std::size_t r = 0; r < io_.plans.size(); ++r) {
      target.memory.push_back(
          {pool.data + io_.state.offset(r), io_.plans[r].buffer_bytes, pool.kind});
    }
  }
  return target;
}

bool TrainingRun::drains() const {
  return e_.kind != EngineKind::tiered ||
         summary_.checkpoints.size() % static_cast<std::size_t>(io_.tiers->drain_every) == 0;
}

FlushJob TrainingRun::flush_job(std::int64_t iteration, const fs::path& dir, bool drain,
                                const std::vector<RankPlan>& written) {
  FlushJob job;
  job.what = fmt::format("checkpoint of iteration {} ({})", iteration,
                         drain ? dir.string() : "local tier and peers");
  backends::Backend& backend = io_.backend;
  // An object store has no directories to make.
  std::function<std::string()> prepare;
  if (drain && !backend.capabilities().object_store)
    prepare = [plans = written] { return create_parent_directories(plans); };
  if (e_.kind == EngineKind::tiered) {
    // The exchange with the peers runs whatever the backend's directories do: they wait for it.
    const backends::MemoryView pool = pool_->view();
    job.write = [this, iteration, drain, &backend, prepare,
                 target = flush_target(iteration, dir, written),
                 part = std::span<std::byte>(pool.data, io_.state.memory().size())] {
      return tier_flush(io_.comm, *io_.tiers, iteration, part,
                        {drain ? &backend : nullptr, prepare, &target}, tier_progress_);
    };
    return job;
  }
  job.prepare = std::move(prepare);
  if (ChunkRing* ring = pool_->ring()) {
    job.write = [&backend, ring, target = flush_target(iteration, dir, written)] {
      return write_through_ring(backend, *ring, target);
    };
    job.abandon = [ring] { ring->close(); };
  } else if (FlushCodec* codec = io_.codec) {
    // The snapshot in the pool compressed on the flush thread, then its frames written.
    job.write = [&backend, codec, plans = io_.plans, &layout = io_.state, pool = pool_->view().data,
                 target = flush_target(iteration, dir, written)]() mutable {
      codec->compress(plans, layout, pool);
      codec->point(target);
      return write_whole(backend, target);
    };
  } else {
    job.write = [&backend, target = flush_target(iteration, dir, written)] {
      return write_whole(backend, target);
    };
  }
  return job;
}

void TrainingRun::copy_snapshot(std::int64_t iteration, bool tear) const {
  const auto next_update = [this, iteration] {
    fill_plans(plans_at_iteration(io_.plans, iteration + 1), io_.state, io_.pattern);
  };
  if (ChunkRing* ring = pool_->ring()) {
    std::function<void()> midway;
    if (tear) midway = next_update;
    fill_ring(*ring, chunks_, chunk_bases_, midway);  // false: the flush failed and says why
    return;
  }
  const std::uint64_t bytes = io_.state.memory().size();
  if (tear) {
    pool_->copy_in(0, bytes / 2);
    next_update();
    pool_->copy_in(bytes / 2, bytes - bytes / 2);
  } else {
    pool_->copy_in(0, bytes);
  }
}

void TrainingRun::checkpoint_background(std::int64_t iteration, Clock::time_point due) {
  CheckpointRecord* record = &summary_.checkpoints.back();
  if (in_flight_) {  // back-pressure: one snapshot in the pool at a time
    poll(true);
    if (!ok()) {  // the one in flight failed: this one never started, and the loop stops at that
                  // one
      summary_.checkpoints.pop_back();
      flush_bytes_.pop_back();
      return;
    }
    record = &summary_.checkpoints.back();
    record->backpressure_seconds = seconds_since(due);
  }
  const bool drain = drains();
  fs::path dir;
  if (drain) {
    if (const std::string problem = io_.claim_dir(iteration, dir); !problem.empty())
      return fail(problem);
    pending_dir_ = dir;
  }
  FlushJob job;
  guard([&] {
    if (drain) prepare_checkpoint(iteration, dir);
    job = flush_job(iteration, dir, drain,
                    io_.reduce ? io_.reduce(iteration, dir, sums_) : io_.plans);
  });
  if (!agree_local()) return;
  pool_->hold();
  ChunkRing* ring = pool_->ring();
  if (e_.kind == EngineKind::lazy) {
    job.snapshot = [this, iteration] { copy_snapshot(iteration, false); };
    job.snapshot_alongside = ring != nullptr;
    lazy_copy_pending_ = true;
  }
  // No other process to agree with: commit on the worker, at once.
  if (drain && io_.comm.kind() == "single") {
    job.commit = [this, dir, iteration, sums = sums_] { return io_.commit(dir, iteration, sums); };
    job.after_commit = [this, dir] { observe(dir); };
  }
  const auto copy = [this, iteration, record] {
    const auto copy_start = Clock::now();
    copy_snapshot(iteration, hooks_.tear_snapshot);
    record->snapshot_seconds = seconds_since(copy_start);
    record->times.snapshot = {at(copy_start), at(Clock::now())};
  };
  if (e_.kind != EngineKind::lazy && ring == nullptr)
    copy();  // the whole snapshot before the flush starts
  worker_.start(std::move(job));
  if (e_.kind == EngineKind::async &&
      ring != nullptr) {  // the flush frees the chunks this copy waits for
    try {
      copy();
    } catch (const std::exception& e) {
      ring->close();
      fail(fmt::format("checkpoint of iteration {} ({}): snapshot copy failed: {}", iteration,
                       dir.string(), e.what()));
    }
  }
  if (ring != nullptr && e_.kind == EngineKind::async)
    record->ring_wait_seconds = ring->copy_wait_seconds();
  in_flight_ = InFlight{summary_.checkpoints.size() - 1, dir, sums_, due, drain};
  record->stall_seconds = seconds_since(due);
}

void TrainingRun::poll(bool block, bool may_commit) {
  if (!in_flight_ || !worker_.busy()) return;
  if (block) {
    worker_.wait_snapshot();
    while (!worker_.finished()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!io_.comm.all(worker_.finished() && may_commit)) return;
  const auto commit_start = Clock::now();
  double observed = 0;  // of the commit made here: outside the loop's times
  const FlushResult result = worker_.collect();
  InFlight flight = std::move(*in_flight_);
  in_flight_.reset();
  CheckpointRecord& record = summary_.checkpoints[flight.record];
  record.flush_seconds = result.flush_seconds;
  record.times.flush = span(result.flush_started_at, result.flush_seconds);
  if (e_.kind == EngineKind::lazy) {
    record.snapshot_seconds = result.copy_seconds;
    record.times.snapshot = span(result.copy_started_at, result.copy_seconds);
  }
  if (e_.kind == EngineKind::lazy && pool_->ring() != nullptr)
    record.ring_wait_seconds = pool_->ring()->copy_wait_seconds();
  flush_bytes_[flight.record] = result.bytes;
  if (io_.codec != nullptr) io_.codec->record(flight.record);
  for (const auto& [name, count] : result.counters) flush_counters_[name] += count;
  if (const std::string problem = io_.comm.first_problem(result.error); !problem.empty()) {
    return fail_checkpoint(problem);
  }
  if (flight.drain && result.committed) {
    record_commit(record, flight.dir,
                  std::chrono::duration<double>(result.committed_at - flight.due).count());
    record.times.commit = {at(result.commit_started_at), at(result.committed_at)};
  } else if (flight.drain) {
    observed_seconds_ = 0;
    commit(flight.dir, record.iteration, flight.sums, record, flight.due);
    observed = observed_seconds_;
  }
  // Every process agreed on the commit (or there was none), so all of them mark the tiers.
  if (e_.kind == EngineKind::tiered && (!flight.drain || record.committed))
    record_tiers(record, flight);
  pool_->release();
  last_commit_seconds_ = io_.comm.max(seconds_since(commit_start) - observed);
  if (!block) {  // wait_for charges what the commit made it overrun
    polled_record_ = flight.record;
    polled_commit_seconds_ = seconds_since(commit_start) - observed;
  }
}

void TrainingRun::record_tiers(CheckpointRecord& record, const InFlight& flight) {
  const TierProgress& p = tier_progress_;
  MemoryTier* memory = io_.tiers->memory;
  if (memory != nullptr)
    record.tier_memory_seconds = std::chrono::duration<double>(p.memory_at - flight.due).count();
  record.tier_local_seconds = std::chrono::duration<double>(p.local_at - flight.due).count();
  record.tier_replicated_seconds =
      std::chrono::duration<double>(p.replicated_at - flight.due).count();
  record.interconnect_bytes = p.replicas.sent_bytes;  // reduce_records: every process's
  record.local_tier_bytes = p.local_bytes;
  if (const std::string problem = tier_commit(io_.comm, *io_.tiers, record.iteration,
                                              record.committed ? flight.dir.string() : "");
      !problem.empty()) {
    return fail(fmt::format("checkpoint of iteration {}: {}", record.iteration, problem));
  }
  // Every node's local tier holds it complete: the memory tier's copy now counts too.
  if (memory != nullptr) memory->complete(record.iteration);
  record.tiers = memory != nullptr ? std::vector<std::string>{"memory", "local"}
                                   : std::vector<std::string>{"local"};
  if (io_.tiers->layout.replicas() > 1) record.tiers.push_back("peers");
  if (record.committed) record.tiers.push_back("remote");
}

void TrainingRun::commit(const fs::path& dir, std::int64_t iteration, const Checksums& sums,
                         CheckpointRecord& record, Clock::time_point due) {
  const auto start = Clock::now();
  const std::string problem = io_.commit(dir, iteration, sums);
  const auto end = Clock::now();
  record.times.commit = {at(start), at(end)};
  if (!problem.empty()) return fail_checkpoint(problem);
  // From the same clock reading as the commit's end: the timeline's durable mark is due + this.
  record_commit(record, dir, at(end) - at(due));
  // Sync: once the loop resumed (checkpoint()). Background: here, kept out of the seconds a
  // polled commit holds the loop (poll()).
  if (e_.kind != EngineKind::sync) observed_seconds_ = observe(dir);
}

void TrainingRun::record_commit(CheckpointRecord& record, const fs::path& dir,
                                double durable_seconds) {
  record.time_to_durable_seconds = durable_seconds;
  record.committed = true;
  pending_dir_.reset();
  summary_.committed_iteration = record.iteration;
  summary_.committed_dir = dir.string();
}

// Every process's view of each checkpoint, combined: the slowest process's times, all bytes.
void TrainingRun::reduce_records() {
  Comm& comm = io_.comm;
  for (std::size_t i = 0; i < summary_.checkpoints.size(); ++i) {
    CheckpointRecord& r = summary_.checkpoints[i];
    r.stall_seconds = comm.max(r.stall_seconds);
    r.snapshot_seconds = comm.max(r.snapshot_seconds);
    r.gather_seconds = comm.max(r.gather_seconds);
    r.backpressure_seconds = comm.max(r.backpressure_seconds);
    r.ring_wait_seconds = comm.max(r.ring_wait_seconds);
    r.time_to_durable_seconds = comm.max(r.time_to_durable_seconds);
    r.flush_seconds = comm.max(r.flush_seconds);
    r.tier_memory_seconds = comm.max(r.tier_memory_seconds);
    r.tier_local_seconds = comm.max(r.tier_local_seconds);
    r.tier_replicated_seconds = comm.max(r.tier_replicated_seconds);
    r.interconnect_bytes = comm.sum(r.interconnect_bytes);
    r.local_tier_bytes = comm.sum(r.local_tier_bytes);
    const auto bytes = comm.sum(flush_bytes_[i]);
    r.flush_gib_s = r.flush_seconds > 0 ? static_cast<double>(bytes) / r.flush_seconds / kGiB : 0;
  }
  summary_.pool_high_water_bytes =
      static_cast<std::uint64_t>(comm.max(static_cast<double>(pool_ ? pool_->high_water() : 0)));
  summary_.error = comm.first_problem(summary_.error);
  summary_.counters = sum_counters(comm, flush_counters_);
}

}  // namespace

TrainingSummary run_training(const TrainingSpec& training, const EngineSpec& engine, TrainingIo& io,
                             const EngineHooks& hooks) {
  return TrainingRun(training, engine, io, hooks).run();
}

}  // namespace ckpt::harness
