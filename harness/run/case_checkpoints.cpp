#include "harness/run/case_checkpoints.hpp"

#include <fmt/format.h>

#include "harness/checkpoint/manifest.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

CaseCheckpoints::CaseCheckpoints(const CaseContext& context, CaseRecorder& record)
    : context_(context), record_(record) {}

// A keeping run owns its case directory: process 0 holds its lock, and every process stops when
// another run holds it. A restore holds it shared, so that no keeping run retires the checkpoint
// it reads.
void CaseCheckpoints::lock() {
  const Case& c = context_.c;
  Comm& comm = context_.comm;
  const bool restoring = context_.reads_stored_checkpoint();
  if (!context_.keeping() && !restoring) return;
  std::string problem, note;
  if (comm.rank() == 0) {
    const fs::path dir = case_directory(c);
    std::error_code ec;
    if (!restoring) {
      lock_ = CaseLock::acquire(dir, problem, note);
    } else if (fs::is_directory(dir, ec)) {  // else there is nothing to restore, which the
                                             // restore's search says
      lock_ = CaseLock::acquire_shared(dir, problem, note);
    }
  }
  if (const std::string first = comm.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: {}", c.index, first));
  }
  if (note = comm.broadcast(note); !note.empty()) record_.add_notes({note});
}

// Checkpoints kept by an earlier run with campaign.overwrite stay untouched until this run's
// first checkpoint is complete. Process 0 alone looks (other processes may not see the directory
// yet, or a stale view). Only the complete one `latest` names is superseded; claim() makes each
// step directory exclusively.
void CaseCheckpoints::continue_numbering() {
  Comm& comm = context_.comm;
  if (comm.rank() == 0) {
    fs::path latest;
    if (!find_latest_checkpoint(context_.c, latest) && fs::exists(latest / kManifestName))
      previous_dirs_.insert(latest);
    first_step_ = next_step_number(context_.c);
  }
  first_step_ = std::stoll(comm.broadcast(std::to_string(first_step_)));
}

fs::path CaseCheckpoints::step_dir(int iteration) const {
  return case_directory(context_.c) /
         checkpoint_dir_name(context_.c.directory_layout, first_step_ + iteration);
}

// Process 0 makes the step directory with an exclusive mkdir, moving to the next number when
// the name exists (a run without the lock, or a leftover), so no two runs share one.
bool CaseCheckpoints::claim(int iteration, fs::path& dir) {
  const Case& c = context_.c;
  Comm& comm = context_.comm;
  std::string problem;
  if (comm.rank() == 0) {
    try {
      first_step_ = create_step_directory(first_step_ + iteration,
                                          [&](std::int64_t step) {
                                            return case_directory(c) /
                                                   checkpoint_dir_name(c.directory_layout, step);
                                          }) -
                    iteration;
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = comm.broadcast(problem);
  first_step_ = std::stoll(comm.broadcast(std::to_string(first_step_)));
  dir = step_dir(iteration);
  if (!problem.empty())
    return record_.fail(fmt::format("checkpoint {}: {}", dir.string(), problem));
  return true;
}

// After its restore verified (or, for --phase checkpoint, as it commits).
void CaseCheckpoints::name_latest(const fs::path& dir, std::int64_t step) {
  Comm& comm = context_.comm;
  std::string problem;
  if (comm.rank() == 0) {
    try {
      record_latest_checkpoint(context_.c, dir, step);
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = comm.broadcast(problem);
  if (!problem.empty()) {
    record_.fail(
        fmt::format("checkpoint {}: recording it as the latest failed: {}", dir.string(), problem));
    return;
  }
  record_.result.checkpoint_dir = dir.string();
}

// A keeping run removes the checkpoints a timed one replaces; warm-up checkpoints, and every
// checkpoint of a run that keeps none, go at once (earlier runs' checkpoints stay). Process 0
// removes; everyone waits. A timed iteration's retire time (process 0's, until everyone has
// waited) is reported beside the checkpoint, never in it.
void CaseCheckpoints::retire(const fs::path& current, bool timed) {
  const auto start = Clock::now();
  const bool keeping = context_.keeping();
  if (context_.comm.rank() == 0) {
    std::error_code ec;
    // An interrupted run's checkpoints are complete too: they supersede the older ones alike.
    const bool complete = record_.ok() || record_.result.status == "interrupted";
    if (keeping && timed && complete) {
      for (const fs::path& old : previous_dirs_) {
        if (old != current) fs::remove_all(old, ec);
      }
      previous_dirs_ = {current};
    } else if (!keeping || !timed) {
      fs::remove_all(current, ec);
    }
  }
  context_.comm.barrier();
  if (timed) record_.timed.retire.push_back(seconds_since(start));
  record_.charge("retire", start);
}

// A failed checkpoint's directory, made by this run (claim), goes at once so that it cannot fill
// the disk for later runs. Process 0 removes it once every process stopped writing: its manifest
// first, so that a removal cut short never leaves a failed checkpoint that looks complete.
std::string remove_failed_step(const fs::path& dir, Comm& comm) {
  std::string outcome;
  if (comm.rank() == 0) {
    std::error_code ec;
    fs::remove(dir / kManifestName, ec);
    if (!ec) fs::remove_all(dir, ec);
    outcome = ec ? fmt::format(
                       "this run could not remove its incomplete directory {}: {} (it has no "
                       "manifest, so "
                       "restore refuses it)",
                       dir.string(), ec.message())
                 : fmt::format("this run removed its incomplete directory {}", dir.string());
  }
  return comm.broadcast(outcome);
}

}  // namespace ckpt::harness
