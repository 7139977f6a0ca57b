#pragma once

// Private to harness/run: after a tiered loop with tiers.lost_nodes, the recovery of the whole job:
// the lost nodes' local tiers removed, every process's state forgotten (the job restarts), then
// every process's part restored from the nearest tier that holds it and verified.
#include <filesystem>
#include <vector>

#include "harness/engine/tier_copies.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

// Collective. `trained`: the loop's plans, their paths under `trained_dir`. The recovery's time
// goes to `reads` (the case's read phase); its bytes by source to the training record. A part no
// surviving tier holds, or a part that fails to verify, fails the case.
void recover_lost_nodes(CaseState& s, const TierSetup& setup, const std::vector<RankPlan>& trained,
                        const std::filesystem::path& trained_dir,
                        std::vector<IterationTiming>& reads);

}  // namespace ckpt::harness
