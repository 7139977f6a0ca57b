#include "harness/run/case_runner.hpp"

#include <fmt/format.h>

#include <chrono>

#include "backends/registry.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/comm/mpi_io_choice.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/common/text_format.hpp"
#include "harness/engine/engine_checks.hpp"
#include "harness/exec/process_plans.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/framework_shards.hpp"
#include "harness/plan/training_state.hpp"
#include "harness/results/environment.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/process_memory.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

// Throws the same SetupError on every process when any process found a problem.
void agree(Comm& comm, const std::string& problem) {
  if (const std::string first = comm.first_problem(problem); !first.empty())
    throw SetupError(first);
}

}  // namespace

CaseExecution::CaseExecution(const Case& c, RunContext& ctx)
    : c_(c),
      ctx_(ctx),
      comm_(ctx.comm),
      layout_(c.model, c.parallel, c.state),
      phase_(ctx.phase.value_or(c.phase)) {
  result_.config = c;
  result_.processes = comm_.size();
  result_.world_size = layout_.world_size();
  result_.full_scale_bytes = static_cast<std::uint64_t>(layout_.checkpoint_bytes());
  selected_ = selected_ranks(c, layout_.world_size());
  result_.modeled_ranks = static_cast<std::int64_t>(selected_.size());
  result_.environment = environment_record(c.target, comm_.kind(), comm_.size());
  result_.hosts = comm_.gather(host_name());
  add_notes(ctx.notes);  // issue 13: the open-file limit raised at start
}

bool CaseExecution::fail(const std::string& error) {
  result_.status = "failed";
  result_.error = error;
  return false;
}

fs::path CaseExecution::step_dir(int iteration) const {
  return case_directory(c_) / checkpoint_dir_name(c_.directory_layout, first_step_ + iteration);
}

void CaseExecution::prepare_write() {
  std::string problem;
  if (comm_.rank() == 0) problem = prepare_target_for_checkpoint(c_).value_or("");
  agree(comm_, comm_.broadcast(problem));
  lock_case();
  // Numbering continues above the highest checkpoint already there (kept by an earlier run with
  // campaign.overwrite): they stay untouched until this run's first checkpoint is complete.
  // Process 0 alone looks (other processes may not see the directory yet, or a stale view).
  // Only the complete one `latest` names is superseded (retired once this run's first is kept);
  // write_iteration makes each step directory exclusively.
  if (comm_.rank() == 0) {
    fs::path latest;
    if (!find_latest_checkpoint(c_, latest) && fs::exists(latest / kManifestName))
      previous_dirs_.insert(latest);
    first_step_ = next_step_number(c_);
  }
  first_step_ = std::stoll(comm_.broadcast(std::to_string(first_step_)));
  planned_dir_ = step_dir(0);
  ProcessPlans plans =
      plan_process(layout_, c_, phase_, selected_, comm_.rank(), comm_.size(), planned_dir_);
  gathers_ = gathers_distributed_optimizer(c_, layout_);  // [training]: sync only (case checks)
  if (gathers_)
    gather_ =
        DpGather(layout_, c_, selected_, comm_.rank(), comm_.size(), plans.write, planned_dir_);
  check_memory(process_memory_bytes(c_, plans, gather_));
  write_plans_ = std::move(plans.write);
  read_plans_ = std::move(plans.read);
  MemorySpace& space = memory_space();
  const auto start = Clock::now();
  if (c_.reuse_bytes > 0) {
    if (gathers_)
      throw SetupError(
          fmt::format("case {}: memory.reuse_bytes cannot hold the gathered distributed "
                      "optimizer: set strategy.megatron_optimizer = \"per_dp\"",
                      c_.index));
    reuse_buffers(space, true);
    result_.fill_seconds = comm_.max(seconds_since(start));
    charge("fill", start);
    record_sizes(write_plans_);
    return;
  }
  write_buffer_ = ProcessBuffer(write_plans_, space);
  if (!read_plans_.empty()) read_buffer_ = ProcessBuffer(read_plans_, space);
  add_notes(space.notes());
  if (gathers_) {
    // Each DP rank generates its own shards; DP rank 0's copies of the others' arrive by the
    // gather.
    gather_.prepare(space, c_.data);
    fill_plans(gather_.fill_held_only(write_plans_), write_buffer_, c_.data);
    checksummed_ = false;
  } else {
    checksums_ = fill_plans(write_plans_, write_buffer_, c_.data);
  }
  result_.fill_seconds = comm_.max(seconds_since(start));
  charge("fill", start);
  record_sizes(write_plans_);
}

void CaseExecution::prepare_restore() {
  lock_case();
  fs::path dir;
  Manifest manifest;
  std::string problem = find_restorable_checkpoint(c_, dir, manifest).value_or("");
  agree(comm_, problem);
  agree(comm_, unreadable_checkpoint(c_, dir, manifest));
  planned_dir_ = dir;
  result_.checkpoint_dir = dir.string();
  if (!written_as_planned(c_, dir, manifest)) return;
  ProcessPlans plans;
  try {
    plans =
        plan_process(layout_, c_, phase_, selected_, comm_.rank(), comm_.size(), dir, &manifest);
    // A [training] checkpoint holds the state of the training iteration its manifest names
    // (resharding plans seed their shards and padding rows with it themselves).
    if (!c_.restore.reshard)
      plans.read = plans_at_iteration(std::move(plans.read), manifest.iteration());
  } catch (const ReshardError& e) {
    problem = e.what();
  } catch (const std::exception& e) {
    problem = fmt::format("{}: damaged manifest: {} — {}", (dir / kManifestName).string(), e.what(),
                          damaged_checkpoint_advice(c_, dir));
  }
  agree(comm_, problem);
  check_memory(plans.buffer_bytes());
  read_plans_ = std::move(plans.read);
  MemorySpace& space = memory_space();
  if (c_.reuse_bytes > 0) {
    reuse_buffers(space, false);
  } else {
    read_buffer_ = ProcessBuffer(read_plans_, space);
    add_notes(space.notes());
  }
  record_sizes(read_plans_);
  if (c_.restore.reshard) record_reshard(read_plans_);
}

// Before planning: a manifest naming files outside the checkpoint is refused like a missing one
// (exit 2; read_manifest refused one this version cannot check); "" when it does not.
std::string CaseExecution::unreadable_checkpoint(const Case& writer, const fs::path& dir,
                                                 const Manifest& manifest) {
  if (auto problem = manifest_path_problem(manifest, dir)) {
    return fmt::format("{}: damaged manifest: {} — {}", (dir / kManifestName).string(), *problem,
                       damaged_checkpoint_advice(writer, dir));
  }
  return "";
}

// Before any data is read: the manifest's tensor list against the plans of the writer's ranks
// (each process checks its share of them), its checkpoint_hash, and a safetensors checkpoint's
// headers and index. Damage fails the case (exit 1, as a failed verification).
bool CaseExecution::written_as_planned(const Case& writer, const fs::path& dir,
                                       const Manifest& manifest) {
  std::string mine;
  try {
    const std::vector<RankPlan> planned =
        plan_ranks(layout_, writer, process_share(selected_, comm_.rank(), comm_.size()), dir);
    mine =
        damaged_checkpoint_problem(manifest, dir, planned, comm_.rank() == 0 ? &selected_ : nullptr,
                                   comm_.rank(), comm_.size())
            .value_or("");
  } catch (const std::exception& e) {
    mine = fmt::format("{}: {}", (dir / kManifestName).string(), e.what());
  }
  if (const std::string problem = comm_.first_problem(mine); !problem.empty()) {
    return fail(fmt::format("damaged checkpoint: {}{}", problem, damage_advice()));
  }
  return true;
}

// memory.reuse_bytes: every request of both phases through one small buffer (fio's and IOR's
// footprint); the manifest's checksums are zero, as the files do not hold the checkpoint's data.
void CaseExecution::reuse_buffers(MemorySpace& space, bool write) {
  std::string problem = reuse_buffer(write_plans_, c_.reuse_bytes);
  if (problem.empty()) problem = reuse_buffer(read_plans_, c_.reuse_bytes);
  agree(comm_, problem.empty() ? problem : fmt::format("case {}: {}", c_.index, problem));
  if (write) write_buffer_ = ProcessBuffer::reused(write_plans_, space, c_.reuse_bytes, c_.data);
  if (!read_plans_.empty())
    read_buffer_ = ProcessBuffer::reused(read_plans_, space, c_.reuse_bytes, c_.data);
  checksums_.clear();
  for (const RankPlan& plan : write_plans_) checksums_.emplace_back(plan.shards.size(), 0);
  add_notes(space.notes());
  add_notes(std::vector<std::string>{
      fmt::format("memory.reuse_bytes: every request moved through one buffer of {} bytes (the "
                  "footprint of fio and "
                  "IOR): the files do not hold the checkpoint's data, nothing verified",
                  c_.reuse_bytes)});
  const std::uint64_t held =
      (write ? c_.reuse_bytes : 0) + (read_plans_.empty() ? 0 : c_.reuse_bytes);
  result_.memory_bytes_per_process =
      static_cast<std::uint64_t>(comm_.max(static_cast<double>(held)));
}

void CaseExecution::check_memory(std::uint64_t mine) {
  const auto need = static_cast<std::uint64_t>(comm_.max(static_cast<double>(mine)));
  result_.memory_bytes_per_process = need;
  if (const auto problem = memory_budget_problem(c_, need, selected_.size(), comm_.size())) {
    throw SetupError(fmt::format("case {}: {}", c_.index, *problem));
  }
}

void CaseExecution::record_sizes(const std::vector<RankPlan>& plans) {
  std::uint64_t payload = 0, padding = 0, extents = 0;
  std::set<std::string> files;
  for (const RankPlan& p : plans) {
    payload += p.payload_bytes;
    padding += p.io.bytes() - std::min(p.io.bytes(), p.payload_bytes);
    extents += p.io.extents();
    for (const auto& f : p.io.files) files.insert(f.path);
  }
  result_.bytes_per_checkpoint = comm_.sum(payload);
  result_.padding_bytes = comm_.sum(padding);
  result_.extents_per_checkpoint = comm_.sum(extents);
  // Shared files are written by several processes: count distinct paths at process 0.
  std::string mine;
  for (const std::string& f : files) mine += f + '\n';
  std::set<std::string> all;
  for (const std::string& list : comm_.gather(mine)) {
    std::size_t begin = 0;
    for (std::size_t end; (end = list.find('\n', begin)) != std::string::npos; begin = end + 1) {
      all.insert(list.substr(begin, end - begin));
    }
  }
  result_.files_per_checkpoint = std::stoull(comm_.broadcast(std::to_string(all.size())));
}

std::unique_ptr<backends::Backend> CaseExecution::make_backend_everywhere() {
  std::string problem;
  std::unique_ptr<backends::Backend> backend;
  try {
    const backends::ProcessGroup group{comm_.rank(), comm_.size(), comm_.mpi_handle()};
    backend = backends::make_backend(c_.backend, c_.io, c_.backend_options, group);
    if (c_.format == CheckpointFormat::safetensors && !backend->capabilities().raw_layout) {
      throw std::invalid_argument(
          "it writes its own file format, not the extents of strategy.format = \"safetensors\": "
          "choose a backend that writes extents as planned (posix, uring, mpiio)");
    }
  } catch (const std::exception& e) {
    problem = fmt::format("backend.name = \"{}\": {}", c_.backend, e.what());
  }
  agree(comm_, problem);
  return backend;
}

// The case's memory space, made on first use (Kokkos starts with the first kokkos case).
MemorySpace& CaseExecution::memory_space() {
  std::string problem;
  MemorySpace* space = nullptr;
  try {
    space = &ctx_.memory.get(c_.memory_space);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  agree(comm_, problem);
  return *space;
}

// Device memory for a backend that cannot address it goes through pinned staging buffers,
// allocated here, before any clock. Collective backends take the whole process buffer at once.
void CaseExecution::prepare_staging() {
  const bool device = write_buffer_.view().kind == backends::MemoryKind::device ||
                      read_buffer_.view().kind == backends::MemoryKind::device;
  if (!device || backend_->capabilities().device_memory) return;
  const bool whole = backend_->capabilities().collective;
  std::string problem;
  try {
    for (ProcessBuffer* b : {&write_buffer_, &read_buffer_}) {
      if (b->view().kind == backends::MemoryKind::device) b->prepare_staging(c_.staging, whole);
    }
  } catch (const std::exception& e) {
    problem = fmt::format("memory.space = \"{}\": staging buffers: {}",
                          memory_space_name(c_.memory_space), e.what());
  }
  agree(comm_, problem);
  result_.staging = whole ? "whole" : "pipelined";
  if (whole) {
    add_notes({fmt::format(
        "backend.name = \"{}\" is collective: each process's whole buffer is staged through pinned "
        "host memory before the write and after the read, without overlap",
        c_.backend)});
  }
}

CaseResult CaseExecution::run() {
  const bool loading =
      phase_ ==
      PhaseSelection::load;  // the loader makes its own backends (harness/run/case_load.cpp)
  const bool write = phase_ != PhaseSelection::restore && !loading;
  if (loading) {
    prepare_load();
  } else if (write) {
    prepare_write();
  } else {
    prepare_restore();
  }
  if (result_.status != "ok") {  // a damaged checkpoint, refused before any read
    result_.wall.seconds = seconds_since(started_);
    return result_;
  }
  if (!loading) {
    backend_ = make_backend_everywhere();
    result_.stores_data = backend_->capabilities().stores_data;
    prepare_staging();
  }
  // Everything before the first iteration but the fill: plans, buffers (allocated and
  // pre-touched), backend, staging.
  const double fill = result_.wall.covered();
  result_.wall.parts.insert(result_.wall.parts.begin(), {"setup", seconds_since(started_) - fill});
  std::vector<IterationTiming> writes, reads;
  const int total = c_.warmup + c_.iterations;
  const auto start = Clock::now();
  const bool training = write && c_.training.enabled();
  if (training) train(reads);  // [training]: harness/run/case_training.cpp
  if (c_.calibrate) start_calibration();
  for (int i = 0; i < total && result_.status == "ok" && !training; ++i) {
    const bool timed = i >= c_.warmup;
    warming_up_ = !timed;
    const bool ok = loading ? load_iteration(i, timed ? &reads : nullptr)
                            : (!calibration_ || calibrate(timed)) &&
                                  (!write || write_iteration(i, timed ? &writes : nullptr)) &&
                                  (phase_ == PhaseSelection::checkpoint ||
                                   read_iteration(i, timed ? &reads : nullptr));
    warming_up_ = false;
    if (!ok) break;
    progress(i, total, seconds_since(start));
    if (!comm_.all(!ctx_.interrupted.load())) {
      result_.status = "interrupted";
      result_.error = "interrupted by a signal after " + std::to_string(i + 1) +
                      " iterations; results so far are kept";
    }
  }
  // One more calibration after the last iteration, so that each timed iteration lies between two.
  if (calibration_ && result_.status == "ok" && (!writes.empty() || !reads.empty()))
    calibrate(true);
  finish_calibration();
  result_.write = summarize(writes, true);
  result_.read = summarize(reads, false);
  result_.verify_seconds = median(verify_s_);
  if (loading) record_load(reads);
  result_.verified = result_.status == "ok" && c_.verify && phase_ != PhaseSelection::checkpoint &&
                     !reads.empty() && (loading || backend_->capabilities().stores_data);
  result_.environment["mpi_io_modules"] = loaded_mpi_io_modules();  // what this case's I/O loaded
  result_.wall.seconds = seconds_since(started_);
  return result_;
}

CaseResult run_case(const Case& c, RunContext& ctx) {
  return CaseExecution(c, ctx).run();
}

}  // namespace ckpt::harness
