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
  std::vector<std::vector<std::uint64_t>> checksums;  // per write plan, per shard (the manifest's)
  std::filesystem::path planned_dir;  // the directory the plans' paths point into now

  // Points both plans' files into `dir`.
  void move_to(const std::filesystem::path& dir);
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
