#include "harness/run/case_runner.hpp"

#include <chrono>
#include <vector>

#include "harness/checkpoint/dcp_metadata.hpp"
#include "harness/comm/mpi_io_choice.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/results/stats.hpp"
#include "harness/run/calibration_phase.hpp"
#include "harness/run/case_integrity.hpp"
#include "harness/run/case_setup.hpp"
#include "harness/run/case_state.hpp"
#include "harness/run/load_phase.hpp"
#include "harness/run/phase_summary.hpp"
#include "harness/run/restore_phase.hpp"
#include "harness/run/tier_restart.hpp"
#include "harness/run/training_phase.hpp"
#include "harness/run/write_phase.hpp"

namespace ckpt::harness {
namespace {

// Drives one case's phases over their shared state: the preparation of the phase the case runs,
// the backend, then the iterations (warm-up first), each a calibration sample, a checkpoint and
// a restore as the phase selects (or one load; or the training loop, or a tiered job's recovery,
// instead of them all).
class CaseRunner {
 public:
  CaseRunner(const Case& c, RunContext& ctx)
      : s_(c, ctx),
        write_(s_),
        restore_(s_),
        load_(s_),
        training_(s_, write_, restore_),
        restart_(s_),
        calibration_(s_) {}

  CaseResult run();

 private:
  bool iteration(int i, std::vector<IterationTiming>& writes, std::vector<IterationTiming>& reads);
  void progress(int i, int total, double elapsed_seconds);
  CaseResult finish(const std::vector<IterationTiming>& writes,
                    const std::vector<IterationTiming>& reads);

  CaseState s_;
  WritePhase write_;
  RestorePhase restore_;
  LoadPhase load_;
  TrainingPhase training_;
  TierRestart restart_;
  CalibrationPhase calibration_;
};

CaseResult CaseRunner::run() {
  const PhaseSelection phase = s_.context.phase;
  const Case& c = s_.context.c;
  CaseRecorder& record = s_.record;
  const bool loading = phase == PhaseSelection::load;  // the loader makes its own backends
  const bool write = phase != PhaseSelection::restore && !loading;
  const bool restarting = recovers_from_tiers(c, phase);  // instead of the restore's iterations
  record_preload(s_);
  if (loading) {
    load_.prepare();
  } else if (write) {
    write_.prepare();
  } else if (restarting) {
    restart_.prepare();
  } else {
    restore_.prepare();
  }
  if (!record.ok()) {  // a damaged checkpoint, refused before any read
    s_.store.requests(record.result.store_requests, record.result.store_requests_max);
    record.result.wall.seconds = seconds_since(s_.started);
    record.result.ended_at = std::chrono::system_clock::now();
    return record.result;
  }
  check_read_gap(s_);
  if (!loading) prepare_backend(s_);
  probe_target(s_, s_.backend.get());
  // Everything before the first iteration but the fill: plans, buffers (allocated and
  // pre-touched), backend, staging.
  const double fill = record.result.wall.covered();
  record.result.wall.parts.insert(record.result.wall.parts.begin(),
                                  {"setup", seconds_since(s_.started) - fill});
  std::vector<IterationTiming> writes, reads;
  const int total = c.warmup + c.iterations;
  const auto start = Clock::now();
  const bool training = write && c.training.enabled();
  if (training) training_.run(reads);
  if (restarting) restart_.run(reads);
  if (c.calibrate) calibration_.start();
  for (int i = 0; i < total && record.ok() && !training && !restarting; ++i) {
    if (!iteration(i, writes, reads)) break;
    progress(i, total, seconds_since(start));
    if (!s_.context.comm.all(!s_.context.run.interrupted.load())) {
      record.result.status = "interrupted";
      record.result.error = "interrupted by a signal after " + std::to_string(i + 1) +
                            " iterations; results so far are kept";
    }
  }
  // One more calibration after the last iteration, so that each timed iteration lies between two.
  if (calibration_.started() && record.ok() && (!writes.empty() || !reads.empty()))
    calibration_.sample(true);
  calibration_.finish();
  return finish(writes, reads);
}

// One iteration of the phase the case runs; false when the case failed.
bool CaseRunner::iteration(int i, std::vector<IterationTiming>& writes,
                           std::vector<IterationTiming>& reads) {
  const PhaseSelection phase = s_.context.phase;
  const bool timed = i >= s_.context.c.warmup;
  s_.record.warming_up = !timed;
  bool ok = false;
  if (phase == PhaseSelection::load) {
    ok = load_.iteration(timed ? &reads : nullptr);
  } else {
    ok = (!calibration_.started() || calibration_.sample(timed)) &&
         (phase == PhaseSelection::restore || write_.iteration(i, timed ? &writes : nullptr)) &&
         (phase == PhaseSelection::checkpoint || restore_.iteration(i, timed ? &reads : nullptr));
  }
  s_.record.warming_up = false;
  return ok;
}

void CaseRunner::progress(int i, int total, double elapsed_seconds) {
  IterationReport& report = s_.record.report;
  report.iteration = i;
  report.iterations = total;
  report.warmup = i < s_.context.c.warmup;
  report.elapsed_seconds = elapsed_seconds;
  const RunContext& run = s_.context.run;
  if (s_.context.comm.rank() == 0 && run.on_iteration) run.on_iteration(s_.context.c, report);
}

// The summaries of the timed iterations, and what the case's result says of them.
CaseResult CaseRunner::finish(const std::vector<IterationTiming>& writes,
                              const std::vector<IterationTiming>& reads) {
  const PhaseSelection phase = s_.context.phase;
  const Case& c = s_.context.c;
  CaseResult& result = s_.record.result;
  const bool loading = phase == PhaseSelection::load;
  result.write = summarize_writes(writes, result.bytes_per_checkpoint, s_.record.timed,
                                  writes_dcp_metadata(c));
  result.read = summarize_reads(reads, result.bytes_per_checkpoint);
  result.verify_seconds = median(s_.record.timed.verify);
  if (loading) load_.record(reads);
  result.verified = result.status == "ok" && c.verify && phase != PhaseSelection::checkpoint &&
                    !reads.empty() && (loading || s_.backend->capabilities().stores_data);
  result.environment["mpi_io_modules"] = loaded_mpi_io_modules();  // what this case's I/O loaded
  result.wall.seconds = seconds_since(s_.started);
  result.ended_at = std::chrono::system_clock::now();
  record_integrity_facts(s_);
  record_write_end(s_);
  // After the store's last request (the write's end marker). A gather: every process takes them
  // here or at run()'s early return, once.
  s_.store.requests(result.store_requests, result.store_requests_max);
  return result;
}

}  // namespace

CaseResult run_case(const Case& c, RunContext& ctx) {
  return CaseRunner(c, ctx).run();
}

}  // namespace ckpt::harness
