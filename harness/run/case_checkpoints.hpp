#pragma once

// Private to harness/run: the checkpoints of one case on disk, as its phases keep them.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "harness/checkpoint/target_check.hpp"
#include "harness/comm/comm.hpp"
#include "harness/run/case_context.hpp"
#include "harness/run/case_recorder.hpp"

namespace ckpt::harness {

// The case directory's lock, the numbering and claiming of step directories, `latest` and the
// retiring of checkpoints that are not kept. Every call is collective; process 0 alone touches
// the directory.
class CaseCheckpoints {
 public:
  CaseCheckpoints(const CaseContext& context, CaseRecorder& record);

  // A keeping run holds the case lock for the whole case, and a restore or load holds it shared
  // (so that no keeping run retires the checkpoint it reads); every process stops with a
  // SetupError when another run holds it.
  void lock();
  // Before the first write: numbering continues above the highest checkpoint already there, and
  // the complete one `latest` names is retired once this run's first is kept.
  void continue_numbering();
  std::int64_t step(std::int64_t iteration) const { return first_step_ + iteration; }
  std::filesystem::path step_dir(int iteration) const;
  // Makes the step directory of `iteration` into `dir` (an exclusive mkdir, moving past names
  // that exist); false when the case failed.
  bool claim(int iteration, std::filesystem::path& dir);
  // Records `dir` as the newest complete checkpoint, or fails the case.
  void name_latest(const std::filesystem::path& dir, std::int64_t step);
  // After the complete checkpoint `current`: what it supersedes (keeping runs) or itself goes.
  void retire(const std::filesystem::path& current, bool timed);

 private:
  const CaseContext& context_;
  CaseRecorder& record_;
  std::int64_t first_step_ = 1;
  // Checkpoints to remove once a newer one is kept (process 0): the complete one `latest` named
  // at the start (campaign.overwrite), then each kept one of this run until the next is complete.
  std::set<std::filesystem::path> previous_dirs_;
  CaseLock lock_;  // held by process 0 for the whole case: a keeping run's, or a restore's (shared)
};

// Collective: removes directory `dir` of a checkpoint of this run that failed (process 0, once
// no process writes into it; its manifest first) and says what became of it, for the error.
std::string remove_failed_step(const std::filesystem::path& dir, Comm& comm);

}  // namespace ckpt::harness
