#pragma once

// Private to harness/run: the results' `reshard` object of a resharding restore.
#include <vector>

#include "harness/comm/comm.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/results/case_result.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// Collective: the counts of the restore's read `plans`, over every process's ranks.
ReshardSummary reshard_summary(const Case& c, Comm& comm, const std::vector<RankPlan>& plans);

}  // namespace ckpt::harness
