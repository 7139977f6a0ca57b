// The [training] part of CaseExecution (harness/run/case_execution.hpp): the training loop with
// its engine replaces the harness's write iterations; the newest committed checkpoint is then
// restored once, timed, and verified against the training iteration its manifest names.
#include <chrono>
#include <fmt/format.h>
#include <thread>

#include "harness/engine/engine_checks.hpp"
#include "harness/engine/training_loop.hpp"
#include "harness/engine/training_state.hpp"
#include "harness/formats/safetensors_plan.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/run/dcp_metadata.hpp"
#include "harness/run/manifest.hpp"
#include "harness/run/target_check.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

std::string CaseExecution::commit_training_checkpoint(const fs::path& dir, std::int64_t iteration,
                                                      const std::vector<std::vector<std::uint64_t>>& sums) {
  const std::vector<std::string> pieces = comm_.gather(manifest_tensors(write_plans_, sums).dump());
  std::string problem;
  if (comm_.rank() == 0) {
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
      commit_manifest(dir, manifest);
      // A kept run names it `latest` at once, so a process killed later leaves it restorable;
      // only then does the newest committed checkpoint replace the loop's previous one.
      if (keeping()) record_latest_checkpoint(c_, dir, first_step_ + iteration);
      // Removed on a thread of its own: deleting a large checkpoint takes longer than the commit.
      if (!committed_training_dir_.empty() && committed_training_dir_ != dir) {
        training_retire_ = std::jthread([old = committed_training_dir_] {
          std::error_code ec;
          fs::remove_all(old, ec);
        });  // joins the previous removal first
      }
      committed_training_dir_ = dir;
    } catch (const std::exception& e) {
      problem = fmt::format("checkpoint {}: manifest commit failed: {}", dir.string(), e.what());
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
                .interrupted = &ctx_.interrupted,
                .gpu_load = gpu_load.get(),
                .gather = gathers_ && c_.engine.kind == EngineKind::sync ? &gather_ : nullptr};  // per_dp: nothing to gather
  const auto start = std::chrono::steady_clock::now();
  result_.training = run_training(c_.training, c_.engine, io);
  training_retire_ = std::jthread();  // the last removal done
  charge("training", start);
  const TrainingSummary& t = *result_.training;
  if (!t.error.empty()) fail(t.error);
  if (t.interrupted && result_.status == "ok") {
    result_.status = "interrupted";
    result_.error = "interrupted by a signal; the in-flight checkpoint was finished and committed";
  }
  if (t.committed_iteration < 0) return;
  const fs::path dir = t.committed_dir;
  write_plans_ = plans_at_iteration(io.plans, t.committed_iteration);
  retarget(write_plans_, io.planned_dir, dir);
  if (!read_plans_.empty()) read_plans_ = plans_at_iteration(read_plans_, t.committed_iteration);
  retarget(read_plans_, planned_dir_, dir);
  planned_dir_ = dir;
  result_.checkpoint_dir = dir.string();
  if (phase_ == PhaseSelection::checkpoint) {
    commit_checkpoint(dir, first_step_ + t.committed_iteration);
    retire_checkpoints(dir, true);
  } else if (result_.status == "ok") {
    read_iteration(0, &reads);
  }
}

}  // namespace ckpt::harness
