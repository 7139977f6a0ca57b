#pragma once

// Private to harness/run: the result of one case as its phases record it.
#include <string>
#include <vector>

#include "harness/common/elapsed.hpp"
#include "harness/exec/dp_gather.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/results/case_result.hpp"
#include "harness/run/case_context.hpp"
#include "harness/run/run_context.hpp"

namespace ckpt::harness {

// Per timed iteration, what the summaries report beside the transfers' own timing.
struct SideSeconds {
  std::vector<double> manifest, metadata, retire, verify, gather;
  GatherCounts gathered;  // one DP gather's counts, summed over processes
};

struct CaseRecorder {
  // The case's fixed facts: its processes, layout, ranks, environment and hosts (collective).
  explicit CaseRecorder(const CaseContext& context);

  CaseResult result;
  SideSeconds timed;
  IterationReport report;   // of the iteration under way
  bool warming_up = false;  // a warm-up iteration is under way

  bool ok() const { return result.status == "ok"; }
  // Records the case as failed with `error`; returns false, for the caller to return.
  bool fail(const std::string& error);
  // Adds the notes not recorded yet, in order.
  void add_notes(const std::vector<std::string>& notes);
  // Adds the time since `start` to `part` of the case's wall time ("warm-up" in a warm-up
  // iteration).
  void charge(const char* part, Clock::time_point start);
};

}  // namespace ckpt::harness
