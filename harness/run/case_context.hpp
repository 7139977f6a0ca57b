#pragma once

// Private to harness/run: what one case is and where it runs, fixed for the whole case.
#include <cstdint>
#include <string>
#include <vector>

#include "harness/comm/comm.hpp"
#include "harness/run/run_context.hpp"
#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

struct CaseContext {
  CaseContext(const Case& one_case, RunContext& run_context);

  const Case& c;
  RunContext& run;
  Comm& comm;
  workloads::Layout layout;
  PhaseSelection phase;                // --phase, else campaign.phase
  std::vector<std::int64_t> selected;  // the modeled ranks the case runs (every process's)

  // Keeping runs (campaign.keep, --phase checkpoint) leave their newest complete checkpoint on
  // disk after every iteration, so an interruption or failure never leaves the case without one.
  bool keeping() const;
  // Restore and load read a checkpoint an earlier run left.
  bool reads_stored_checkpoint() const;
};

// Collective: throws the same SetupError on every process when any process found a problem.
void agree(Comm& comm, const std::string& problem);

}  // namespace ckpt::harness
