#pragma once

// Private to harness/run: the checkpoints of one case in its store, as its phases keep them.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "backends/backend.hpp"
#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/comm/comm.hpp"
#include "harness/run/case_context.hpp"
#include "harness/run/case_recorder.hpp"

namespace ckpt::harness {

// The case's checkpoint store (a file system or an object store), its lock, the numbering and
// claiming of checkpoints, `latest` and the retiring of checkpoints that are not kept. Every call
// is collective; process 0 alone touches the store, but for the file system's restore search,
// which every process makes (as it reads the files anyway), and the file system's look for a new
// checkpoint from another process (time_until_visible).
class CaseCheckpoints {
 public:
  CaseCheckpoints(const CaseContext& context, CaseRecorder& record);

  // Opens the case's store (an object store's connection, on process 0), before any other call;
  // every process stops with a SetupError when it cannot (an unreachable endpoint, a missing
  // bucket).
  void open();
  CheckpointStore& store() { return *store_; }
  // Before a write: the target checked and prepared (process 0); a SetupError on every process
  // names the problem.
  void prepare_target();
  // A keeping run holds the case lock for the whole case, and a restore or load holds it shared
  // (so that no keeping run retires the checkpoint it reads); every process stops with a
  // SetupError when another run holds it. In an object store every writing run holds it: its
  // checkpoint numbers are claimed by the lock alone.
  void lock();
  // Before the first write: numbering continues above the highest checkpoint already there, and
  // the complete one `latest` names is retired once this run's first is kept.
  void continue_numbering();
  std::int64_t step(std::int64_t iteration) const { return first_step_ + iteration; }
  std::filesystem::path step_dir(int iteration) const;
  // Claims the step directory of `iteration` into `dir` (an exclusive mkdir on a file system,
  // moving past names that exist); false when the case failed.
  bool claim(int iteration, std::filesystem::path& dir);
  // Records `dir` as the newest complete checkpoint, or fails the case.
  void name_latest(const std::filesystem::path& dir, std::int64_t step);
  // After the complete checkpoint `current`: what it supersedes (keeping runs) or itself goes;
  // `needed` (process 0's): the directory names of the earlier checkpoints of this run that
  // `current` points at (strategy.selective_every), which stay until a newer checkpoint no longer
  // needs them. Returns whether `current` stays (the same on every process).
  bool retire(const std::filesystem::path& current, bool timed,
              const std::set<std::string>& needed = {});
  // Removes checkpoint `dir` of this run that failed (process 0, once no process writes into it;
  // its manifest first) and says what became of it, for the error.
  std::string discard(const std::filesystem::path& dir);
  // The newest complete checkpoint `writer` wrote, and its manifest, on every process; the problem
  // (the same on every process) or "".
  std::string find_restorable(const Case& writer, std::filesystem::path& dir, Manifest& manifest);
  // What to do when checkpoint `dir` of case `c` turned out damaged (damaged_checkpoint_advice);
  // not collective.
  std::string damage_advice(const Case& c, const std::filesystem::path& dir);
  // Whether time_until_visible has another process to look from: an object store (process 0
  // alone uses a connection of its own), or a file system under several processes.
  bool observes_visibility() const;
  // After the commit of checkpoint `dir`: the seconds until another process (the first on
  // another host than process 0, else 1, else 0 alone) lists its manifest and reads it, polled
  // from the end of the commit: in an object store through `observer_backend`'s object-store
  // primitives (the observing process's data backend, a connection of its own), on a file system
  // through its own listing and open of the directory. nullopt where that failed or took over
  // 10 s (a note says which). Collective.
  std::optional<double> time_until_visible(const std::filesystem::path& dir,
                                           backends::Backend& observer_backend);
  // The store's own requests by kind so far (an object store's; else none), every process's
  // counted: into `total` summed, into `most` the largest count of each kind on one process; at
  // process 0 (elsewhere both stay empty). Every process must call it, once per case and at the
  // same point: a gather.
  void requests(std::map<std::string, std::uint64_t>& total,
                std::map<std::string, std::uint64_t>& most);

 private:
  const CaseContext& context_;
  CaseRecorder& record_;
  // The process that looks for each checkpoint (time_until_visible); collective the first time.
  int observer();

  std::int64_t first_step_ = 1;
  std::optional<int> observer_;  // observer()'s choice, once made
  // Checkpoints to remove once a newer one is kept (process 0): the complete one `latest` named
  // at the start (campaign.overwrite), then each kept one of this run until the next is complete.
  std::set<std::filesystem::path> previous_dirs_;
  std::unique_ptr<CheckpointStore> store_;
  // Held by process 0 for the whole case: a keeping run's, or a restore's (shared). After the
  // store, which it may use as it goes.
  std::unique_ptr<StoreLock> lock_;
};

}  // namespace ckpt::harness
