// The [training] part of CaseExecution (harness/run/case_execution.hpp): the training loop with
// its engine replaces the harness's write iterations; the newest committed checkpoint is then
// restored once, timed, and verified against the training iteration its manifest names.
#include <chrono>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <thread>

#include "harness/engine/engine_checks.hpp"
#include "harness/engine/flush_worker.hpp"
#include "harness/engine/training_loop.hpp"
#include "harness/plan/training_state.hpp"
#include "harness/checkpoint/safetensors_index.hpp"
#include "harness/plan/safetensors_plan.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/checkpoint/dcp_metadata.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/target_check.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

namespace {

// The case's `latest` pointers as they are (nullopt: absent), so that a commit that fails midway
// can put them back: `latest` must never name a checkpoint that is then removed.
struct LatestPointers {
  std::optional<std::string> latest, iteration;
};

std::optional<std::string> text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

LatestPointers read_latest_pointers(const Case& c) {
  return {text_of(case_directory(c) / "latest"), text_of(case_directory(c) / "latest_checkpointed_iteration.txt")};
}

void put_back(const fs::path& path, const std::optional<std::string>& text) noexcept {
  try {
    if (text) {
      write_file_atomically(path, *text);
    } else {
      std::error_code ec;
      fs::remove(path, ec);
    }
  } catch (...) {  // best effort: the failure itself is what the run reports
  }
}

// Names `dir` (checkpoint number `step`) `latest`; on failure the earlier pointers are put back.
void record_latest_or_put_back(const Case& c, const fs::path& dir, std::int64_t step) {
  const LatestPointers before = read_latest_pointers(c);
  try {
    record_latest_checkpoint(c, dir, step);
  } catch (...) {
    put_back(case_directory(c) / "latest", before.latest);
    put_back(case_directory(c) / "latest_checkpointed_iteration.txt", before.iteration);
    throw;
  }
}

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

std::string CaseExecution::commit_training_checkpoint(const fs::path& dir, std::int64_t iteration,
                                                      const std::vector<std::vector<std::uint64_t>>& sums) {
  const std::vector<std::string> pieces = comm_.gather(manifest_tensors(write_plans_, sums).dump());
  std::string problem;
  if (comm_.rank() == 0) {
    fs::path superseded = dir;  // allocated before the commit: once `latest` names dir, nothing may throw
    try {
      nlohmann::json tensors = nlohmann::json::array();
      for (const std::string& piece : pieces) {
        for (auto& t : nlohmann::json::parse(piece)) tensors.push_back(std::move(t));
      }
      // The layout's coordinator files, as the write iterations write them (inside the checkpoint's
      // time to durable); the seconds they took go to phases.write.metadata's samples.
      metadata_s_.push_back(commit_coordinator_files(c_, dir, tensors));
      // Hugging Face loaders find a sharded checkpoint's files through its index, as the write
      // iterations write it.
      if (c_.format == CheckpointFormat::safetensors) {
        const bool weights_only = c_.state.scope == workloads::StateScope::weights;
        write_file_atomically(dir / kSafetensorsIndexName, safetensors_index(tensors, weights_only).dump(2));
      }
      nlohmann::json manifest = make_manifest(c_, layout_.world_size(), selected_, std::move(tensors),
                                              first_step_ + iteration);
      manifest["training_iteration"] = iteration;
      commit_manifest(dir, manifest);  // last of the checkpoint's files, by temp file and rename
      // A kept run names it `latest` at once, so a process killed later leaves it restorable;
      // only then does the newest committed checkpoint replace the loop's previous one.
      if (keeping()) record_latest_or_put_back(c_, dir, first_step_ + iteration);
    } catch (const std::bad_alloc&) {
      problem = "out of memory (std::bad_alloc)";
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem.empty()) {
      committed_training_dir_.swap(superseded);
      if (!superseded.empty() && superseded != dir) retire_superseded(training_retire_, superseded);
    } else {
      problem = fmt::format("checkpoint {}: manifest commit failed: {}", dir.string(), problem);
    }
  }
  return comm_.broadcast(problem);
}

void CaseExecution::train(std::vector<IterationTiming>& reads) {
  const auto state_bytes = static_cast<std::uint64_t>(comm_.max(static_cast<double>(write_buffer_.memory().size())));
  const auto problem = engine_problem(c_, backend_->capabilities(), state_bytes, comm_.thread_level()).value_or("");
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
                .claim_dir = [this](std::int64_t iteration, fs::path& dir) {
                  return claim_step_dir(static_cast<int>(iteration), dir) ? std::string() : result_.error;
                },
                .commit = [this](const fs::path& dir, std::int64_t iteration,
                                 const std::vector<std::vector<std::uint64_t>>& sums) {
                  return commit_training_checkpoint(dir, iteration, sums);
                },
                .discard = [this](const fs::path& dir) { return remove_failed_step(dir, comm_); },
                .interrupted = &ctx_.interrupted,
                .gpu_load = gpu_load.get(),
                .gather = gathers_ && c_.engine.kind == EngineKind::sync ? &gather_ : nullptr};  // per_dp: nothing to gather
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

void CaseExecution::after_training(const std::vector<RankPlan>& trained, const fs::path& trained_dir,
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
    if (result_.status != "failed") commit_checkpoint(dir, first_step_ + t.committed_iteration);
    retire_checkpoints(dir, true);
  } else if (result_.status == "ok") {
    read_iteration(0, &reads);
  } else if (t.interrupted && keeping() && result_.status == "interrupted") {
    retire_checkpoints(dir, true);  // as a finished run's restore would: what it superseded goes
  }
}

}  // namespace ckpt::harness
