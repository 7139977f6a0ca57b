#include "harness/run/case_context.hpp"

#include "harness/plan/checkpoint_plan.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {

CaseContext::CaseContext(const Case& one_case, RunContext& run_context)
    : c(one_case),
      run(run_context),
      comm(run_context.comm),
      layout(one_case.model, one_case.parallel, one_case.state),
      phase(run_context.phase.value_or(one_case.phase)),
      selected(selected_ranks(one_case, layout.world_size())) {}

bool CaseContext::keeping() const {
  return c.keep || phase == PhaseSelection::checkpoint;
}

bool CaseContext::reads_stored_checkpoint() const {
  return phase == PhaseSelection::restore || phase == PhaseSelection::load;
}

void agree(Comm& comm, const std::string& problem) {
  if (const std::string first = comm.first_problem(problem); !first.empty())
    throw SetupError(first);
}

}  // namespace ckpt::harness
