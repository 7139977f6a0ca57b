// The [training] part of CaseExecution (harness/run/case_execution.hpp): the training loop with
// its engine replaces the harness's write iterations; the newest committed checkpoint is then
// restored once, timed, and verified against the training iteration its manifest names.
#include <fmt/format.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "harness/checkpoint/checkpoint_commit.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/engine/flush_worker.hpp"
#include "harness/engine/training_loop.hpp"
#include "harness/plan/training_state.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

namespace {

// Removes the loop's previous checkpoint `old` on a thread of its own (deleting a large checkpoint
// takes longer than the commit), or here when no thread can be started (memory is short). The
// commit is complete by now: nothing here may fail it.
void retire_superseded(std::jthread& retire, fs::path& old) noexcept {
  try {
    retire = std::jthread([old] {
      std::error_code ec;
      fs::remove_all(old, ec);
    });  // joins the previous removal first
  } catch (...) {
    std::error_code ec;
    fs::remove_all(old, ec);
  }
}

}  // namespace

std::string CaseExecution::commit_training_checkpoint(
    const fs::path& dir, std::int64_t iteration,
    const std::vector<std::vector<std::uint64_t>>& sums) {
  fs::path superseded =
      dir;  // allocated before the commit: once `latest` names dir, nothing may throw
  CommitTimes times;
  // A kept run names it `latest` at once, so a process killed later leaves it restorable; only
  // then does the newest committed checkpoint replace the loop's previous one.
  const std::string problem = commit_checkpoint(comm_, c_, dir,
                                                {.world_size = layout_.world_size(),
                                                 .ranks = &selected_,
                                                 .step = first_step_ + iteration,
                                                 .training_iteration = iteration,
                                                 .name_latest = keeping()},
                                                write_plans_, sums, &times);
  if (comm_.rank() == 0 && problem.empty()) {
    // The coordinator files' seconds (inside the checkpoint's time to durable) go to
    // phases.write.metadata's samples.
    metadata_s_.push_back(times.metadata_seconds);
    committed_training_dir_.swap(superseded);
    if (!superseded.empty() && superseded != dir) retire_superseded(training_retire_, superseded);
  }
  return problem;
}

void CaseExecution::train(std::vector<IterationTiming>& reads) {
  const auto state_bytes =
      static_cast<std::uint64_t>(comm_.max(static_cast<double>(write_buffer_.memory().size())));
  const auto problem =
      engine_problem(c_, backend_->capabilities(), state_bytes, comm_.thread_level()).value_or("");
  if (const std::string first = comm_.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: {}", c_.index, first));
  }
  std::unique_ptr<GpuLoad> gpu_load;
  if (c_.training.compute == ComputeKind::gpu) {
    std::string no_load;
    try {
      gpu_load = make_gpu_load();
    } catch (const std::exception& e) {
      no_load = e.what();
    }
    if (const std::string first = comm_.first_problem(no_load); !first.empty()) {
      throw SetupError(fmt::format("case {}: {}", c_.index, first));
    }
  }
  TrainingIo io{.comm = comm_,
                .backend = *backend_,
                .plans = write_plans_,
                .planned_dir = planned_dir_,
                .state = write_buffer_,
                .pattern = c_.data,
                .claim_dir =
                    [this](std::int64_t iteration, fs::path& dir) {
                      return claim_step_dir(static_cast<int>(iteration), dir) ? std::string()
                                                                              : result_.error;
                    },
                .commit =
                    [this](const fs::path& dir, std::int64_t iteration,
                           const std::vector<std::vector<std::uint64_t>>& sums) {
                      return commit_training_checkpoint(dir, iteration, sums);
                    },
                .discard = [this](const fs::path& dir) { return remove_failed_step(dir, comm_); },
                .interrupted = &ctx_.interrupted,
                .gpu_load = gpu_load.get(),
                .gather = gathers_ && c_.engine.kind == EngineKind::sync
                              ? &gather_
                              : nullptr};  // per_dp: nothing to gather
  const auto start = std::chrono::steady_clock::now();
  try {
    result_.training = run_training(c_.training, c_.engine, io);
  } catch (const std::invalid_argument&) {
    throw;  // a setup problem found before any I/O
  } catch (...) {
    // Memory or threads short before any checkpoint (the host pool), or with other processes
    // (they all end: the caller).
    training_retire_ = std::jthread();
    if (comm_.size() > 1) throw;
    fail(fmt::format("training loop: {}", describe_exception(std::current_exception())));
    return;
  }
  training_retire_ = std::jthread();  // the last removal done
  charge("training", start);
  const TrainingSummary& t = *result_.training;
  if (!t.error.empty()) fail(t.error);
  if (t.interrupted && result_.status == "ok") {
    result_.status = "interrupted";
    result_.error = "interrupted by a signal; the in-flight checkpoint was finished and committed";
  }
  if (t.committed_iteration >= 0) after_training(io.plans, io.planned_dir, reads);
}

void CaseExecution::after_training(const std::vector<RankPlan>& trained,
                                   const fs::path& trained_dir,
                                   std::vector<IterationTiming>& reads) {
  const TrainingSummary& t = *result_.training;
  const fs::path dir = t.committed_dir;
  write_plans_ = plans_at_iteration(trained, t.committed_iteration);
  retarget(write_plans_, trained_dir, dir);
  if (!read_plans_.empty()) read_plans_ = plans_at_iteration(read_plans_, t.committed_iteration);
  retarget(read_plans_, planned_dir_, dir);
  planned_dir_ = dir;
  result_.checkpoint_dir = dir.string();
  if (phase_ == PhaseSelection::checkpoint) {
    // `latest` already names it (the loop's commit); after a failure, recording it again could
    // only replace the failure's message with its own.
    if (result_.status != "failed") name_latest(dir, first_step_ + t.committed_iteration);
    retire_checkpoints(dir, true);
  } else if (result_.status == "ok") {
    read_iteration(0, &reads);
  } else if (t.interrupted && keeping() && result_.status == "interrupted") {
    retire_checkpoints(dir, true);  // as a finished run's restore would: what it superseded goes
  }
}

}  // namespace ckpt::harness
