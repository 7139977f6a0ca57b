#pragma once

// Private to harness/run: the checkpoint (write) phase of a case.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/exec/dp_gather.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"
#include "harness/run/selective_chain.hpp"

namespace ckpt::harness {

class WritePhase {
 public:
  explicit WritePhase(CaseState& state);

  // Collective, before any clock: the target and the case lock, the plans of the process's ranks
  // (and of their restore), the buffers filled, Megatron's DP gather set up.
  void prepare();
  // One checkpoint: step directory claimed, DP gather, timed write, commit; for --phase
  // checkpoint also `latest` and retiring. Keeps its timing in `timings` (timed iterations; null
  // in warm-up). False when the case failed.
  bool iteration(int iteration, std::vector<IterationTiming>* timings);
  // The gather the sync training loop runs before each of its checkpoints; null when none.
  DpGather* sync_gather();

 private:
  double gather();  // collective: the gather's seconds (slowest process)

  CaseState& s_;
  // Megatron's gathered distributed optimizer (DpGather): the DP shards reach DP rank 0's buffer
  // only through the gather before each checkpoint (write iterations and the sync [training] loop
  // alike).
  bool gathers_ = false;
  DpGather gather_;
  bool checksummed_ = true;  // the checksums hold the gathered bytes (after the first gather)
  SelectiveChain chain_;     // strategy.selective_every, partial_experts, delta_every
  // strategy.delta_every: the step whose state the write buffer holds (0: as filled).
  std::int64_t buffer_step_ = 0;
  // strategy.delta_every, before the checkpoint of `step`: the emulated update's changed blocks
  // rewritten in the write buffer, the checksums taken again.
  void update_state(std::int64_t step);
  // Collective, once the step directory `dir` of `iteration` is claimed: the plans it writes.
  const std::vector<RankPlan>& to_write(int iteration, const std::filesystem::path& dir,
                                        bool timed);
  // After checkpoint `dir` committed: `latest` and retiring (--phase checkpoint), the selective
  // chain's copies settled and recorded (`timed`).
  void retire(const std::filesystem::path& dir, bool timed);
};

}  // namespace ckpt::harness
