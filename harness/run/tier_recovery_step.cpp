#include "harness/run/tier_recovery_step.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <set>

#include "harness/engine/tier_recovery.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/plan/training_state.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// This process's part of the remote tier's checkpoint of `iteration` in `dir`, read through the
// backend into the state buffer. Returns the bytes read; a failure goes to `error`.
std::uint64_t read_remote(CaseState& s, const std::vector<RankPlan>& trained,
                          const fs::path& trained_dir, std::int64_t iteration, const fs::path& dir,
                          std::string& error) {
  std::vector<RankPlan> plans = plans_at_iteration(trained, iteration);
  retarget(plans, trained_dir, dir);
  std::vector<PlanCall> calls;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    calls.push_back(
        {&plans[r].io, s.data.write_buffer.rank_view(r), 0, fmt::format("rank {}", plans[r].rank)});
  }
  const Execution done = execute_plans(*s.backend, calls, false, nullptr, OnThrow::record);
  if (!done.error.empty() && error.empty())
    error = fmt::format("remote tier ({}): {}", dir.string(), done.error);
  return done.bytes;
}

void count_part(RecoveryRecord& r, PartSource source) {
  int& parts = source == PartSource::local  ? r.local_parts
               : source == PartSource::peer ? r.peer_parts
                                            : r.remote_parts;
  ++parts;
}

}  // namespace

void recover_lost_nodes(CaseState& s, const TierSetup& setup, const std::vector<RankPlan>& trained,
                        const fs::path& trained_dir, std::vector<IterationTiming>& reads) {
  Comm& comm = s.context.comm;
  const Case& c = s.context.c;
  TrainingSummary& t = *s.record.result.training;
  const std::set<int> lost = node_set(c.engine.tiers.lost_nodes);
  comm.barrier();  // every process's loop is over: nothing writes into a local tier any more
  const std::vector<NodeHolding> nodes = survey_nodes(comm, setup, lost);
  const auto planned =
      plan_recovery(setup.layout, nodes, lost, t.committed_iteration, setup.drain_every);
  if (const auto* refusal = std::get_if<std::string>(&planned)) {
    s.record.fail(
        fmt::format("recovery after losing nodes {{{}}}: {}", fmt::join(lost, ", "), *refusal));
    return;
  }
  const RecoveryPlan& plan = std::get<RecoveryPlan>(planned);
  const auto zero_start = Clock::now();
  s.data.write_buffer.zero();  // the restarted job remembers nothing
  s.record.charge("zero buffers", zero_start);
  comm.barrier();
  const auto start = Clock::now();
  ProcessSample sample;
  sample.start_wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const backends::MemoryView state = s.data.write_buffer.view();
  RecoveryBytes bytes = fetch_parts(comm, setup, plan, {state.data, state.size});
  std::uint64_t remote = 0;
  if (plan.source[static_cast<std::size_t>(comm.rank())] == PartSource::remote)
    remote = read_remote(s, trained, trained_dir, plan.iteration, t.committed_dir, bytes.error);
  sample.seconds = seconds_since(start);
  const IterationTiming timing = gather_timing(sample, comm);
  s.record.charge("restore", start);
  RecoveryRecord r{.lost_nodes = c.engine.tiers.lost_nodes,
                   .iteration = plan.iteration,
                   .seconds = comm.max(sample.seconds),
                   .local_bytes = comm.sum(bytes.local),
                   .peer_bytes = comm.sum(bytes.peer),
                   .remote_bytes = comm.sum(remote)};
  for (const PartSource source : plan.source) count_part(r, source);
  t.recovery = r;
  if (const std::string problem = comm.first_problem(bytes.error); !problem.empty()) {
    s.record.fail(fmt::format("recovery of iteration {}: {}", plan.iteration, problem));
    return;
  }
  const auto verify_start = Clock::now();
  const std::string wrong =
      comm.first_problem(c.verify ? verify_plans(plans_at_iteration(trained, plan.iteration),
                                                 s.data.write_buffer, c.data)
                                  : "");
  s.record.timed.verify.push_back(comm.max(seconds_since(verify_start)));
  s.record.charge("verify", verify_start);
  if (!wrong.empty()) {
    s.record.fail(fmt::format("recovery of iteration {}: verification: {}", plan.iteration, wrong));
    return;
  }
  reads.push_back(timing);
}

}  // namespace ckpt::harness
