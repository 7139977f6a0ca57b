#pragma once

// Private to harness/run: the recovery of a tiered job that lost nodes: the lost nodes' local tiers
// removed, every process's state forgotten (the job restarts), then every process's part restored
// from the nearest tier that holds it and verified. It runs after a tiered loop with
// tiers.lost_nodes, or as a job of its own (--phase restore of a tiered case: TierRestart).
#include <cstdint>
#include <filesystem>
#include <vector>

#include "harness/engine/tier_copies.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// The remote tier's newest complete checkpoint: its training iteration (-1: it holds none) and
// its directory in the case's store.
struct RemoteCheckpoint {
  std::int64_t iteration = -1;
  std::filesystem::path dir;
};

// Collective, before any I/O: the case's [tiers] layout for `comm`'s processes, whose largest
// state buffer is `state_bytes`; SetupError on every process when it cannot work.
TierSetup checked_tier_setup(const Case& c, Comm& comm, std::uint64_t state_bytes);

// Collective. `trained`: the plans of the state the loop trained, their paths under
// `trained_dir`. The recovery's time goes to `reads` (the case's read phase); its bytes by source
// to the record's training.recovery, which must exist. A part no surviving tier holds refuses the
// recovery: `restarted` (a job of its own, before any of its reads) with a SetupError (exit 2),
// else by failing the case, as does a part that fails to verify.
void recover_lost_nodes(CaseState& s, const TierSetup& setup, const std::vector<RankPlan>& trained,
                        const std::filesystem::path& trained_dir, const RemoteCheckpoint& remote,
                        bool restarted, std::vector<IterationTiming>& reads);

}  // namespace ckpt::harness
