#pragma once

// Private to harness/run: one case being executed (split over case_runner.cpp and case_steps.cpp).
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/backend.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/exec/calibration.hpp"
#include "harness/exec/dp_gather.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/results/case_result.hpp"
#include "harness/run/run_context.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// Collective: removes directory `dir` of a checkpoint of this run that failed (process 0, once
// no process writes into it; its manifest first) and says what became of it, for the error.
std::string remove_failed_step(const std::filesystem::path& dir, Comm& comm);

class CaseExecution {
 public:
  CaseExecution(const Case& c, RunContext& ctx);
  CaseResult run();

 private:
  void prepare_write();
  void prepare_restore();
  // The checks of every read path (harness/checkpoint/manifest_checks.hpp) of the checkpoint
  // `writer` wrote in `dir`: before planning, what makes it unreadable ("" when nothing: collective
  // use through agree); after, damage, which fails the case (false).
  std::string unreadable_checkpoint(const Case& writer, const std::filesystem::path& dir,
                                    const Manifest& manifest);
  bool written_as_planned(const Case& writer, const std::filesystem::path& dir,
                          const Manifest& manifest);
  // The load phase (harness/run/case_load.cpp): the inference ranks' plans, the loader's
  // iterations instead of the backend's reads, and the [load] result.
  void prepare_load();
  bool load_iteration(int iteration, std::vector<IterationTiming>* timings);
  // After a timed read (`what`: "restore" or "load") of `plans` into `buffer`: the first error,
  // else verification (when `verify`), the iteration's read figures and `timing` kept (timed
  // iterations). False when the case failed.
  bool finish_read(const char* what, const ProcessSample& sample, const IterationTiming& timing,
                   const std::vector<RankPlan>& plans, const ProcessBuffer& buffer, bool verify,
                   std::vector<IterationTiming>* timings);
  void record_load(const std::vector<IterationTiming>& loads);
  void check_memory(std::uint64_t mine);
  void reuse_buffers(MemorySpace& space,
                     bool write);  // memory.reuse_bytes (harness/exec/process_buffer.hpp)
  void record_sizes(const std::vector<RankPlan>& plans);
  void record_reshard(const std::vector<RankPlan>& plans);  // harness/run/reshard_result.cpp
  std::unique_ptr<backends::Backend> make_backend_everywhere();
  MemorySpace& memory_space();
  void prepare_staging();
  void add_notes(const std::vector<std::string>& notes);
  bool write_iteration(int iteration, std::vector<IterationTiming>* timings);
  bool read_iteration(int iteration, std::vector<IterationTiming>* timings);
  bool keeping() const;
  void name_latest(const std::filesystem::path& dir, std::int64_t step);
  void retire_checkpoints(const std::filesystem::path& current, bool timed);
  void progress(int i, int total, double elapsed_seconds);
  std::optional<PhaseSummary> summarize(const std::vector<IterationTiming>& timings,
                                        bool write) const;
  std::filesystem::path step_dir(int iteration) const;
  // Reliability (issue 13): the case lock of a keeping run, and exclusive step directories.
  void lock_case();
  bool claim_step_dir(int iteration, std::filesystem::path& dir);
  bool fail(const std::string& error);
  std::string damage_advice();  // collective; "" unless the phase is restore
  void add_notes(const IterationTiming& timing);
  // Adds the time since `start` to `part` of the case's wall time ("warm-up" in a warm-up
  // iteration).
  void charge(const char* part, std::chrono::steady_clock::time_point start);
  // [training] cases (defined in harness/run/case_training.cpp): the loop and its engine
  // instead of the write iterations, then one timed restore of the newest committed checkpoint.
  void train(std::vector<IterationTiming>& reads);
  // After the loop: the plans and directory of its newest committed checkpoint (`trained`: the
  // loop's plans, paths under `trained_dir`), then its restore, or its record as the case's latest.
  void after_training(const std::vector<RankPlan>& trained,
                      const std::filesystem::path& trained_dir,
                      std::vector<IterationTiming>& reads);
  std::string commit_training_checkpoint(const std::filesystem::path& dir, std::int64_t iteration,
                                         const std::vector<std::vector<std::uint64_t>>& sums);
  // measure.calibration (harness/run/case_calibration.cpp): one calibration sample before an
  // iteration, kept when `timed`; false (the case failed) when it could not be taken.
  void start_calibration();
  bool calibrate(bool timed);
  void finish_calibration();
  std::unique_ptr<Calibration> calibration_;

  std::filesystem::path
      committed_training_dir_;    // process 0: the loop's newest committed checkpoint
  std::jthread training_retire_;  // process 0: removing the one it replaced

  std::chrono::steady_clock::time_point started_ =
      std::chrono::steady_clock::now();  // the case's wall clock
  const Case& c_;
  RunContext& ctx_;
  Comm& comm_;
  workloads::Layout layout_;
  PhaseSelection phase_;
  CaseResult result_;
  std::vector<std::int64_t> selected_;
  std::vector<RankPlan> write_plans_, read_plans_;
  ProcessBuffer write_buffer_, read_buffer_;
  std::vector<std::vector<std::uint64_t>> checksums_;
  std::unique_ptr<backends::Backend> backend_;
  std::int64_t first_step_ = 1;
  std::filesystem::path planned_dir_;  // the directory the plans' paths point into now
  // Checkpoints to remove once a newer one is kept (process 0): the complete one `latest` named
  // at the start (campaign.overwrite), then each kept one of this run until the next is complete.
  std::set<std::filesystem::path> previous_dirs_;
  CaseLock lock_;  // held by process 0 for the whole case: a keeping run's, or a restore's (shared)
  std::vector<double> manifest_s_, metadata_s_, retire_s_, verify_s_,
      gather_s_;  // per timed iteration
  // Megatron's gathered distributed optimizer (harness/exec/dp_gather.hpp): the DP shards reach
  // DP rank 0's buffer only through the gather before each checkpoint (write iterations and the
  // sync [training] loop alike).
  bool gathers_ = false;
  DpGather gather_;
  bool checksummed_ = true;   // checksums_ hold the gathered bytes (after the first gather)
  GatherCounts gathered_;     // one gather's counts, summed over processes
  double gather_iteration();  // collective: the gather's seconds (slowest process)
  int load_pool_chunks_ = 0;  // the load phase: chunks in the pipelined loader's pool
  std::uint64_t load_reads_ =
      0;  // the load phase: the loader's pread requests in one load (this process)
  bool warming_up_ = false;
  IterationReport report_;  // of the iteration under way
};

}  // namespace ckpt::harness
