#pragma once

// Private to harness/run: the restore phase of a case, of a checkpoint an earlier run kept
// (--phase restore, same layout or resharded) or of the one this run just wrote (--phase both).
#include <vector>

#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

class RestorePhase {
 public:
  explicit RestorePhase(CaseState& state);

  // --phase restore, collective, before any clock: the case lock, the newest restorable
  // checkpoint found and checked, the read plans (resharded when restore.reshard) and buffers.
  // A damaged checkpoint fails the case here.
  void prepare();
  // One restore: cache policy, buffers zeroed (padding seeded), timed read, verification; for
  // --phase both also `latest` (keeping runs) and retiring. Keeps its timing in `timings` (timed
  // iterations; null in warm-up). False when the case failed.
  bool iteration(int iteration, std::vector<IterationTiming>* timings);

 private:
  CaseState& s_;
};

}  // namespace ckpt::harness
