#pragma once

// Private to harness/run: the load phase of a case (--phase load, campaign.phase = "load"): an
// inference server's weight loading of an existing checkpoint.
#include <cstdint>
#include <vector>

#include "harness/exec/iteration.hpp"
#include "harness/load/framed_load.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

class LoadPhase {
 public:
  explicit LoadPhase(CaseState& state);

  // Collective, before any clock: the case lock, the checkpoint of the load's source case found
  // and checked, the inference ranks' read plans and their buffers. A checkpoint that cannot be
  // planned throws SetupError; a damaged one fails the case.
  void prepare();
  // One load of every inference rank's slices, verified; its timing kept in `timings` (timed
  // iterations; null in warm-up). False when the case failed.
  bool iteration(std::vector<IterationTiming>* timings);
  // The result's [load] record over the timed loads.
  void record(const std::vector<IterationTiming>& loads);

 private:
  bool cooperative_iteration(std::vector<IterationTiming>* timings);

  CaseState& s_;
  int pool_chunks_ = 0;      // chunks in the pipelined loader's pool
  std::uint64_t reads_ = 0;  // the loader's pread requests in one load (this process)
  FramedFiles framed_;       // a compressed checkpoint's frames (empty otherwise)
};

}  // namespace ckpt::harness
