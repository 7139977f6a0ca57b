#pragma once

#include <stdexcept>
#include <string>

#include "harness/results/case_result.hpp"
#include "harness/run/run_context.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// A case that cannot start (target missing, memory budget exceeded, backend unavailable).
// Same message on every process; the run stops with it.
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs one case on every process of ctx.comm: plans, buffers, timed checkpoints and restores,
// verification. The full result is on process 0; I/O failures are recorded in it (status
// "failed"), setup problems throw SetupError on every process.
CaseResult run_case(const Case& c, RunContext& ctx);

}  // namespace ckpt::harness
