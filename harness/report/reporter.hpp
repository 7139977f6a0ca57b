#pragma once

#include <cstddef>
#include <string>

#include "harness/results/case_result.hpp"

namespace ckpt::harness {

// What a reporter learns before the first case runs.
struct RunInfo {
  std::string campaign;  // campaign.name
  std::string source;    // the campaign file
  std::size_t cases =
      0;  // cases the campaign expands to (fewer may run: an interrupted run stops early)
  int processes = 1;
};

// Receives the results of one `ckptbench run` on process 0: begin once, add per case in case
// order, end once. A console table, results files, and what reads them later (report, compare,
// gate, HTML) plug in here. Calls come from one thread; none is made concurrently.
class Reporter {
 public:
  virtual ~Reporter() = default;
  // Before the first case. May check that it will be able to write (and throw
  // std::runtime_error naming what it cannot), but creates nothing: a run refused before its
  // first case leaves no trace.
  virtual void begin(const RunInfo& run) = 0;
  // One finished case, also a failed or interrupted one. Whatever it writes is flushed before
  // it returns, so a run killed later keeps the cases it reported. Throws std::runtime_error
  // when it cannot write.
  virtual void add(const CaseResult& result) = 0;
  // After the last case that ran (also after an interruption); not called when the run stops
  // with an error.
  virtual void end() = 0;
};

}  // namespace ckpt::harness
