#pragma once

// Private to harness/run: the state of one case that its phases (write, restore, load, training,
// calibration) share, and that the case runner hands to each.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/loadplan/piece_exchange.hpp"
#include "harness/loadplan/replica_plans.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/run/case_checkpoints.hpp"
#include "harness/run/case_context.hpp"
#include "harness/run/case_recorder.hpp"

namespace ckpt::harness {

// This process's plans, the buffers they move and the write's checksums.
struct CaseBuffers {
  std::vector<RankPlan> write_plans, read_plans;
  ProcessBuffer write_buffer, read_buffer;
  // strategy.compression: the frames the write and the restore move (compress_plans, decode_plans).
  std::vector<RankPlan> stored_plans;
  ProcessBuffer stored_buffer;
  // restore.replicas = "cooperative": what this process reads of read_plans, and the pieces it
  // then sends or receives (share_replicas).
  std::vector<RankPlan> fetched_plans;
  std::vector<ReplicaShare> shares;
  // A cooperative resharded restore or load: the pieces this process reads, sends and receives
  // (plan_piece_exchange), the buffer it reads its pieces into and the one messages pass through.
  PieceExchange exchange;
  ProcessBuffer exchange_buffer;
  std::vector<std::byte> bounce;
  std::vector<std::vector<std::uint64_t>> checksums;  // per write plan, per shard (the manifest's)
  std::filesystem::path planned_dir;  // the directory the plans' paths point into now

  // Points both plans' files into `dir`.
  void move_to(const std::filesystem::path& dir);
  // Whether a read moves read_plans in read_buffer, else the write's plans and buffer: always in
  // the restore phase, which writes nothing (a process of it may read no rank at all, when the
  // restore's layout has fewer ranks than there are processes); with --phase both only under
  // read_shift, whose read plans are as many as the write's.
  bool reads_own_plans(PhaseSelection phase) const {
    return phase == PhaseSelection::restore || !read_plans.empty();
  }
};

struct CaseState {
  CaseState(const Case& c, RunContext& run);
  CaseState(const CaseState&) = delete;
  CaseState& operator=(const CaseState&) = delete;

  Clock::time_point started = Clock::now();  // the case's wall clock
  CaseContext context;
  CaseRecorder record;
  CaseBuffers data;
  CaseCheckpoints store;
  std::unique_ptr<backends::Backend> backend;  // every phase's but the load's (own backends)
};

}  // namespace ckpt::harness
