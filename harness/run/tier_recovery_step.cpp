#include "harness/run/tier_recovery_step.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "harness/engine/engine_checks.hpp"
#include "harness/engine/tier_recovery.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/plan/training_state.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// This process's part of the remote tier's checkpoint `remote`, read through the backend into the
// state buffer. Returns the bytes read; a failure goes to `error`.
std::uint64_t read_remote(CaseState& s, const std::vector<RankPlan>& trained,
                          const fs::path& trained_dir, const RemoteCheckpoint& remote,
                          std::string& error) {
  std::vector<RankPlan> plans = plans_at_iteration(trained, remote.iteration);
  retarget(plans, trained_dir, remote.dir);
  std::vector<PlanCall> calls;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    calls.push_back(
        {&plans[r].io, s.data.write_buffer.rank_view(r), 0, fmt::format("rank {}", plans[r].rank)});
  }
  const Execution done = execute_plans(*s.backend, calls, false, nullptr, OnThrow::record);
  if (!done.error.empty() && error.empty())
    error = fmt::format("remote tier ({}): {}", remote.dir.string(), done.error);
  return done.bytes;
}

void count_part(RecoveryRecord& r, PartSource source) {
  int& parts = source == PartSource::memory  ? r.memory_parts
               : source == PartSource::local ? r.local_parts
               : source == PartSource::peer  ? r.peer_parts
                                             : r.remote_parts;
  ++parts;
}

// Collective: the record's bytes and parts by source, and per source the slowest of the processes
// whose part came from it (`seconds`: this process's, from the barrier to its part in place).
RecoveryRecord recovery_record(Comm& comm, const RecoveryPlan& plan, const RecoveryBytes& bytes,
                               std::uint64_t from_remote, double seconds) {
  RecoveryRecord r{.iteration = plan.iteration,
                   .memory_bytes = comm.sum(bytes.memory),
                   .local_bytes = comm.sum(bytes.local),
                   .peer_bytes = comm.sum(bytes.peer),
                   .remote_bytes = comm.sum(from_remote)};
  for (const PartSource source : plan.source) count_part(r, source);
  r.peer_parts_from_memory =
      static_cast<int>(std::count(plan.peer_memory.begin(), plan.peer_memory.end(), true));
  const PartSource mine = plan.source[static_cast<std::size_t>(comm.rank())];
  const auto slowest = [&](PartSource source) { return comm.max(mine == source ? seconds : 0.0); };
  r.memory_seconds = slowest(PartSource::memory);
  r.local_seconds = slowest(PartSource::local);
  r.peer_seconds = slowest(PartSource::peer);
  r.remote_seconds = slowest(PartSource::remote);
  return r;
}

// Collective: the lost nodes' local tiers removed, then where each part comes from; nullopt when
// the recovery was refused (`restarted`: SetupError, else the case failed).
std::optional<RecoveryPlan> plan_parts(CaseState& s, const TierSetup& setup,
                                       const RemoteCheckpoint& remote, bool restarted) {
  Comm& comm = s.context.comm;
  const std::set<int> lost = node_set(s.context.c.engine.tiers.lost_nodes);
  comm.barrier();  // no process writes into a local tier any more
  const std::vector<NodeHolding> nodes = survey_nodes(comm, setup, lost);
  auto planned = plan_recovery(setup.layout, nodes, lost, remote.iteration, setup.drain_every,
                               survey_memory(comm, setup, lost),
                               setup.memory != nullptr && setup.memory->replicas() > 0);
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    if (!nodes[n].damaged.empty()) {
      planned = fmt::format("the local tier of node {}: {}", n, nodes[n].damaged);
      break;
    }
  }
  if (const auto* refusal = std::get_if<std::string>(&planned)) {
    const std::string problem =
        fmt::format("recovery after losing nodes {{{}}}: {}", fmt::join(lost, ", "), *refusal);
    if (restarted) throw SetupError(fmt::format("case {}: {}", s.context.c.index, problem));
    s.record.fail(problem);
    return std::nullopt;
  }
  return std::get<RecoveryPlan>(std::move(planned));
}

}  // namespace

TierSetup checked_tier_setup(const Case& c, Comm& comm, std::uint64_t state_bytes) {
  const TierSpec& t = c.engine.tiers;
  const std::optional<int> launch = launch_processes_per_node();
  const auto problem = tier_layout_problem(t, comm.size(), launch, state_bytes)
                           .value_or(local_tier_backend_problem(t.local_backend).value_or(""));
  if (const std::string first = comm.first_problem(problem); !first.empty())
    throw SetupError(fmt::format("case {}: {}", c.index, first));
  return {.layout = tier_layout(t, comm.size(), launch),
          .local_dir = t.local_dir,
          .drain_every = t.drain_every,
          .max_part_bytes = state_bytes,
          .chunk_bytes = t.chunk_bytes,
          .local = make_local_tier_backend(t.local_backend)};
}

void recover_lost_nodes(CaseState& s, const TierSetup& setup, const std::vector<RankPlan>& trained,
                        const fs::path& trained_dir, const RemoteCheckpoint& remote, bool restarted,
                        std::vector<IterationTiming>& reads) {
  Comm& comm = s.context.comm;
  const Case& c = s.context.c;
  const std::optional<RecoveryPlan> plan = plan_parts(s, setup, remote, restarted);
  if (!plan) return;
  const auto zero_start = Clock::now();
  s.data.write_buffer.zero();  // the restarted job remembers nothing
  s.record.charge("zero buffers", zero_start);
  comm.barrier();
  const auto start = Clock::now();
  ProcessSample sample;
  sample.start_wall =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const backends::MemoryView state = s.data.write_buffer.view();
  RecoveryBytes bytes = fetch_parts(comm, setup, *plan, {state.data, state.size});
  std::uint64_t from_remote = 0;
  if (plan->source[static_cast<std::size_t>(comm.rank())] == PartSource::remote) {
    from_remote = read_remote(s, trained, trained_dir, remote, bytes.error);
    bytes.in_place = Clock::now();
  }
  sample.seconds = seconds_since(start);
  const IterationTiming timing = gather_timing(sample, comm);
  s.record.charge("restore", start);
  RecoveryRecord r = recovery_record(comm, *plan, bytes, from_remote,
                                     std::chrono::duration<double>(bytes.in_place - start).count());
  r.lost_nodes = c.engine.tiers.lost_nodes;
  r.seconds = comm.max(sample.seconds);  // the senders' share too
  r.restarted = restarted;
  s.record.result.training->recovery = r;
  if (const std::string problem = comm.first_problem(bytes.error); !problem.empty()) {
    s.record.fail(fmt::format("recovery of iteration {}: {}", plan->iteration, problem));
    return;
  }
  const auto verify_start = Clock::now();
  const std::string wrong =
      comm.first_problem(c.verify ? verify_plans(plans_at_iteration(trained, plan->iteration),
                                                 s.data.write_buffer, c.data)
                                  : "");
  s.record.timed.verify.push_back(comm.max(seconds_since(verify_start)));
  s.record.charge("verify", verify_start);
  if (!wrong.empty()) {
    s.record.fail(
        fmt::format("recovery of iteration {}: verification: {}", plan->iteration, wrong));
    return;
  }
  reads.push_back(timing);
}

}  // namespace ckpt::harness
