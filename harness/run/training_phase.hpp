#pragma once

// Private to harness/run: the [training] phase of a case: the training loop with its engine
// (run_training) instead of the write iterations, then one timed restore of the newest committed
// checkpoint, verified against the training iteration its manifest names.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/engine/flush_codec.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"
#include "harness/run/restore_phase.hpp"
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
  // Collective (a single process's may run on the flush thread): checkpoint_visible_seconds of a
  // committed checkpoint.
  void observe_commit(const std::filesystem::path& dir);

  CaseState& s_;
  WritePhase& write_;
  RestorePhase& restore_;
  std::filesystem::path committed_dir_;  // process 0: the loop's newest committed checkpoint
  std::jthread retire_;                  // process 0: removing the one it replaced
  // strategy.compression: the loop's codec; a checkpoint's manifest records its frames' plans.
  std::optional<FlushCodec> codec_;
};

}  // namespace ckpt::harness
