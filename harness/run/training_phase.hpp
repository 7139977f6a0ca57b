#pragma once

// Private to harness/run: the [training] phase of a case: the training loop with its engine
// (run_training) instead of the write iterations, then one timed restore of the newest committed
// checkpoint, verified against the training iteration its manifest names.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/engine/flush_codec.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"
#include "harness/run/restore_phase.hpp"
#include "harness/run/selective_chain.hpp"
#include "harness/run/write_phase.hpp"

namespace ckpt::harness {

class TrainingPhase {
 public:
  // `write` prepared the state the loop trains; `restore` reads its last checkpoint back.
  TrainingPhase(CaseState& state, WritePhase& write, RestorePhase& restore);

  // Collective: the loop (a setup problem found before any I/O throws SetupError), then the
  // restore of its newest committed checkpoint, timed into `reads` (--phase checkpoint: its
  // record as the case's latest instead).
  void run(std::vector<IterationTiming>& reads);

 private:
  // After the loop: the plans and directory of its newest committed checkpoint (`trained`: the
  // loop's plans, paths under `trained_dir`), then its restore (unless `recovering`: the tiers'
  // recovery replaces it), or its record as the latest.
  void after_loop(const std::vector<RankPlan>& trained, const std::filesystem::path& trained_dir,
                  std::vector<IterationTiming>& reads, bool recovering);
  // Collective: the codec's figures of every committed checkpoint into the compression record.
  void record_encodes(const TrainingSummary& t);
  std::string commit(const std::filesystem::path& dir, std::int64_t iteration,
                     const std::vector<std::vector<std::uint64_t>>& sums);
  // strategy.selective_every, partial_experts, delta_every: of the state at `iteration` (with the
  // checksums `sums`), the plans its checkpoint in `dir` writes (TrainingIo::reduce).
  const std::vector<RankPlan>& reduce(std::int64_t iteration, const std::filesystem::path& dir,
                                      const std::vector<std::vector<std::uint64_t>>& sums);
  // Collective, after the checkpoint of `iteration` in `dir` was committed (`kept`) or failed:
  // the chain's copies settled and recorded, and process 0 removes the loop's checkpoints that
  // neither it nor a newer one points at.
  void settle_chain(const std::filesystem::path& dir, std::int64_t iteration, bool kept);
  // Collective (a single process's may run on the flush thread): checkpoint_visible_seconds of a
  // committed checkpoint.
  void observe_commit(const std::filesystem::path& dir);

  CaseState& s_;
  WritePhase& write_;
  RestorePhase& restore_;
  std::filesystem::path committed_dir_;  // process 0: the loop's newest committed checkpoint
  std::jthread retire_;                  // process 0: removing the ones it replaced
  SelectiveChain chain_;                 // strategy.selective_every, partial_experts, delta_every
  // Process 0, with chain_: the loop's committed checkpoints still kept (the newest and those it
  // points at).
  std::set<std::filesystem::path> chain_dirs_;
  // strategy.compression: the loop's codec; a checkpoint's manifest records its frames' plans.
  std::optional<FlushCodec> codec_;
};

}  // namespace ckpt::harness
