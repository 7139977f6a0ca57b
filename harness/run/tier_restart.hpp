#pragma once

// Private to harness/run: --phase restore of a tiered [training] case is the restarted job: no
// state survives from the job that trained (the processes of tiers.lost_nodes are gone with their
// local tiers), and every process's part comes from the nearest tier that holds the newest
// complete checkpoint: its own node's local tier, a clique peer's over MPI, else the backend.
#include <vector>

#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"
#include "harness/run/tier_recovery_step.hpp"

namespace ckpt::harness {

class TierRestart {
 public:
  explicit TierRestart(CaseState& state);

  // Collective, before any clock: the case lock (shared), the backend's newest complete
  // checkpoint when it holds one (the local tiers may hold a newer one), the plans of the state
  // the loop trained and its buffer.
  void prepare();
  // Collective: the recovery (a part no surviving tier holds: SetupError, before any read), timed
  // into `reads` and recorded in training.recovery.
  void run(std::vector<IterationTiming>& reads);

 private:
  CaseState& s_;
  RemoteCheckpoint remote_;
};

}  // namespace ckpt::harness
