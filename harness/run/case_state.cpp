#include "harness/run/case_state.hpp"

#include "harness/exec/iteration.hpp"

namespace ckpt::harness {

void CaseBuffers::move_to(const std::filesystem::path& dir) {
  retarget(write_plans, planned_dir, dir);
  retarget(read_plans, planned_dir, dir);
  retarget(stored_plans, planned_dir, dir);
  planned_dir = dir;
}

CaseState::CaseState(const Case& c, RunContext& run)
    : context(c, run), record(context), store(context, record) {}

}  // namespace ckpt::harness
