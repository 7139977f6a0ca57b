#include "harness/run/tier_restart.hpp"

#include <fmt/format.h>

#include "harness/checkpoint/target_check.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/run/case_runner.hpp"
#include "harness/run/case_setup.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// Collective: the newest complete checkpoint the case's store holds (process 0 lists it), or
// none; one it holds but cannot restore (written with other keys, a damaged manifest) is a
// SetupError on every process.
RemoteCheckpoint newest_remote(CaseState& s) {
  const Case& c = s.context.c;
  Comm& comm = s.context.comm;
  std::string any;
  if (comm.rank() == 0) {
    try {
      any = s.store.store().complete_checkpoints(c).empty() ? "" : "yes";
    } catch (const std::exception&) {  // no case directory yet: nothing was drained
    }
  }
  if (comm.broadcast(any).empty()) return {};
  RemoteCheckpoint remote;
  Manifest manifest;
  agree(comm, s.store.find_restorable(c, remote.dir, manifest));
  remote.iteration = manifest.iteration();
  return remote;
}

}  // namespace

TierRestart::TierRestart(CaseState& state) : s_(state) {}

void TierRestart::prepare() {
  const CaseContext& context = s_.context;
  const Case& c = context.c;
  Comm& comm = context.comm;
  CaseBuffers& data = s_.data;
  s_.store.open();
  s_.store.lock();
  remote_ = newest_remote(s_);
  // The plans' paths matter only for parts read from the backend: its checkpoint's.
  data.planned_dir = remote_.iteration >= 0 ? remote_.dir : case_directory(c);
  if (remote_.iteration >= 0) s_.record.result.checkpoint_dir = remote_.dir.string();
  // The loop's state, as the job that trained planned it.
  ProcessPlans plans = plan_process(context.layout, c, PhaseSelection::checkpoint, context.selected,
                                    comm.rank(), comm.size(), data.planned_dir);
  check_memory(s_, ProcessBuffer::bytes_for(plans.write));
  data.write_plans = std::move(plans.write);
  MemorySpace& space = case_memory_space(s_);
  data.write_buffer = ProcessBuffer(data.write_plans, space);
  s_.record.add_notes(space.notes());
  record_sizes(s_, data.write_plans);
}

void TierRestart::run(std::vector<IterationTiming>& reads) {
  const Case& c = s_.context.c;
  Comm& comm = s_.context.comm;
  const std::string unfit =
      tier_recovery_problem(c, s_.backend->capabilities(), "--phase restore of a tiered case")
          .value_or("");
  agree(comm, unfit.empty() ? unfit : fmt::format("case {}: {}", c.index, unfit));
  const auto state_bytes = static_cast<std::uint64_t>(
      comm.max(static_cast<double>(s_.data.write_buffer.memory().size())));
  const TierSetup setup = checked_tier_setup(c, comm, state_bytes);
  TrainingSummary& t = s_.record.result.training.emplace();
  t.engine = std::string(engine_name(c.engine.kind));
  t.tiers = tier_layout_record(setup);
  recover_lost_nodes(s_, setup, s_.data.write_plans, s_.data.planned_dir, remote_, true, reads);
}

}  // namespace ckpt::harness
