// The iterations of a case: timed checkpoint, manifest commit, cache policy, timed restore,
// verification, and retiring checkpoints that are not kept.
#include <fmt/format.h>

#include <chrono>

#include "harness/checkpoint/checkpoint_commit.hpp"
#include "harness/checkpoint/dcp_metadata.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/exec/cache_policy.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

std::vector<backends::IoPlan> io_of(const std::vector<RankPlan>& plans) {
  std::vector<backends::IoPlan> out;
  for (const RankPlan& p : plans) out.push_back(p.io);
  return out;
}

}  // namespace

// A failed checkpoint's directory, made by this run (claim_step_dir), goes at once so that it
// cannot fill the disk for later runs. Process 0 removes it once every process stopped writing:
// its manifest first, so that a removal cut short never leaves a failed checkpoint that looks
// complete.
std::string remove_failed_step(const fs::path& dir, Comm& comm) {
  std::string outcome;
  if (comm.rank() == 0) {
    std::error_code ec;
    fs::remove(dir / kManifestName, ec);
    if (!ec) fs::remove_all(dir, ec);
    outcome = ec ? fmt::format(
                       "this run could not remove its incomplete directory {}: {} (it has no "
                       "manifest, so "
                       "restore refuses it)",
                       dir.string(), ec.message())
                 : fmt::format("this run removed its incomplete directory {}", dir.string());
  }
  return comm.broadcast(outcome);
}

void CaseExecution::add_notes(const IterationTiming& timing) {
  add_notes(timing.notes);
}

void CaseExecution::add_notes(const std::vector<std::string>& notes) {
  for (const std::string& note : notes) {
    if (std::find(result_.notes.begin(), result_.notes.end(), note) == result_.notes.end())
      result_.notes.push_back(note);
  }
}

// Keeping runs (campaign.keep, --phase checkpoint) leave their newest complete checkpoint on
// disk after every iteration, so an interruption or failure never leaves the case without one.
bool CaseExecution::keeping() const {
  return c_.keep || phase_ == PhaseSelection::checkpoint;
}

// Records `dir` as the newest complete checkpoint, after its restore verified.
void CaseExecution::name_latest(const fs::path& dir, std::int64_t step) {
  std::string problem;
  if (comm_.rank() == 0) {
    try {
      record_latest_checkpoint(c_, dir, step);
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = comm_.broadcast(problem);
  if (!problem.empty()) {
    fail(
        fmt::format("checkpoint {}: recording it as the latest failed: {}", dir.string(), problem));
    return;
  }
  result_.checkpoint_dir = dir.string();
}

// A restore of a kept checkpoint that fails (a file gone, short or changed) says what else the
// case directory holds; a checkpoint this run just wrote (--phase both) has no other to offer.
std::string CaseExecution::damage_advice() {
  if (phase_ != PhaseSelection::restore && phase_ != PhaseSelection::load) return "";
  std::string advice;
  if (comm_.rank() == 0) advice = " — " + damaged_checkpoint_advice(c_, planned_dir_);
  return comm_.broadcast(advice);
}

void CaseExecution::charge(const char* part, Clock::time_point start) {
  result_.wall.add(warming_up_ ? "warm-up" : part, seconds_since(start));
}

// Reliability (issue 13) — a keeping run owns its case directory: process 0 holds its lock,
// and every process stops when another run holds it.
// A restore holds it shared, so that no keeping run retires the checkpoint it reads.
void CaseExecution::lock_case() {
  const bool restoring = phase_ == PhaseSelection::restore || phase_ == PhaseSelection::load;
  if (!keeping() && !restoring) return;
  std::string problem, note;
  if (comm_.rank() == 0) {
    const fs::path dir = case_directory(c_);
    std::error_code ec;
    if (!restoring) {
      lock_ = CaseLock::acquire(dir, problem, note);
    } else if (fs::is_directory(
                   dir, ec)) {  // else there is nothing to restore, which prepare_restore says
      lock_ = CaseLock::acquire_shared(dir, problem, note);
    }
  }
  if (const std::string first = comm_.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: {}", c_.index, first));
  }
  if (note = comm_.broadcast(note); !note.empty()) add_notes({note});
}

// Process 0 makes the step directory with an exclusive mkdir, moving to the next number when
// the name exists (a run without the lock, or a leftover), so no two runs share one.
bool CaseExecution::claim_step_dir(int iteration, fs::path& dir) {
  std::string problem;
  if (comm_.rank() == 0) {
    try {
      first_step_ = create_step_directory(first_step_ + iteration,
                                          [&](std::int64_t step) {
                                            return case_directory(c_) /
                                                   checkpoint_dir_name(c_.directory_layout, step);
                                          }) -
                    iteration;
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  problem = comm_.broadcast(problem);
  first_step_ = std::stoll(comm_.broadcast(std::to_string(first_step_)));
  dir = step_dir(iteration);
  if (!problem.empty()) return fail(fmt::format("checkpoint {}: {}", dir.string(), problem));
  return true;
}
// End of the issue-13 step ownership code.

// Megatron gathers the distributed optimizer onto DP rank 0 before it saves; its own phase, timed
// from a barrier to the slowest process's end.
double CaseExecution::gather_iteration() {
  comm_.barrier();
  const auto start = Clock::now();
  const GatherCounts counts = gather_.run(comm_, write_buffer_);
  const double seconds = comm_.max(seconds_since(start));
  gathered_ = {comm_.sum(counts.received_bytes), comm_.sum(counts.local_bytes)};
  if (!checksummed_) {
    checksums_ = shard_checksums(write_plans_, write_buffer_);
    checksummed_ = true;
  }
  return seconds;
}

bool CaseExecution::write_iteration(int iteration, std::vector<IterationTiming>* timings) {
  // The step directory is claimed before the clock (one mkdir by process 0); the directories
  // below it are made inside the timed transfer. Its wall time counts as "checkpoint".
  fs::path dir;
  auto start = Clock::now();
  if (!claim_step_dir(iteration, dir)) return false;
  retarget(write_plans_, planned_dir_, dir);
  retarget(read_plans_, planned_dir_, dir);
  planned_dir_ = dir;
  const double gather_seconds = gathers_ ? gather_iteration() : 0.0;
  const ProcessSample sample = timed_transfer(*backend_, write_plans_, write_buffer_, true, comm_);
  const IterationTiming timing = gather_timing(sample, comm_);
  charge("checkpoint", start);
  add_notes(timing);
  if (!comm_.all(sample.error.empty())) {
    const std::string error = comm_.broadcast(timing.first_error);
    return fail(
        fmt::format("checkpoint {} failed: {} — {}; earlier complete checkpoints are untouched",
                    dir.string(), error, remove_failed_step(dir, comm_)));
  }
  start = Clock::now();
  // A --phase checkpoint run names each timed checkpoint `latest` as it commits it; --phase both
  // only once its restore verified (read_iteration).
  const bool name_latest = phase_ == PhaseSelection::checkpoint && timings != nullptr;
  CommitTimes commit;
  const std::string problem = commit_checkpoint(comm_, c_, dir,
                                                {.world_size = layout_.world_size(),
                                                 .ranks = &selected_,
                                                 .step = first_step_ + iteration,
                                                 .name_latest = name_latest},
                                                write_plans_, checksums_, &commit);
  if (!problem.empty()) {
    charge("commit", start);
    return fail(fmt::format("{} — {}; earlier complete checkpoints are untouched", problem,
                            remove_failed_step(dir, comm_)));
  }
  report_.write_gib_s = static_cast<double>(result_.bytes_per_checkpoint) / timing.seconds / kGiB;
  report_.write_seconds = timing.seconds;
  if (timings != nullptr) {
    timings->push_back(timing);
    manifest_s_.push_back(commit.manifest_seconds);
    metadata_s_.push_back(commit.metadata_seconds);
    if (gathers_) gather_s_.push_back(gather_seconds);
  }
  if (name_latest) result_.checkpoint_dir = dir.string();
  charge("commit", start);
  if (phase_ == PhaseSelection::checkpoint) retire_checkpoints(dir, timings != nullptr);
  return true;
}

bool CaseExecution::finish_read(const char* what, const ProcessSample& sample,
                                const IterationTiming& timing, const std::vector<RankPlan>& plans,
                                const ProcessBuffer& buffer, bool verify,
                                std::vector<IterationTiming>* timings) {
  if (!comm_.all(sample.error.empty())) {
    return fail(fmt::format("{} of {} failed: {}{}", what, planned_dir_.string(),
                            comm_.broadcast(timing.first_error), damage_advice()));
  }
  if (verify) {
    const auto start = Clock::now();
    const std::string mine = verify_plans(plans, buffer, c_.data);
    const double seconds = comm_.max(seconds_since(start));
    const std::string problem = comm_.first_problem(mine);
    charge("verify", start);
    if (!problem.empty())
      return fail(fmt::format("{}: {}{}", planned_dir_.string(), problem, damage_advice()));
    if (timings != nullptr) verify_s_.push_back(seconds);
    report_.verify_seconds = seconds;
  }
  report_.read_gib_s = static_cast<double>(result_.bytes_per_checkpoint) / timing.seconds / kGiB;
  report_.read_seconds = timing.seconds;
  report_.cache_policy = result_.cache_policy_applied;
  if (timings != nullptr) timings->push_back(timing);
  return true;
}

bool CaseExecution::read_iteration(int iteration, std::vector<IterationTiming>* timings) {
  const bool own_buffers = !read_plans_.empty();
  const std::vector<RankPlan>& plans = own_buffers ? read_plans_ : write_plans_;
  ProcessBuffer& buffer = own_buffers ? read_buffer_ : write_buffer_;
  auto start = Clock::now();
  const std::string applied = apply_cache_policy(c_.cache, io_of(plans));
  result_.cache_policy_applied = comm_.broadcast(applied);
  charge("cache drop", start);
  start = Clock::now();
  buffer.zero();
  if (c_.restore.reshard)
    fill_reshard_padding(plans, buffer_offsets(plans, buffer), buffer.memory(), c_.data);
  charge("zero buffers", start);
  start = Clock::now();
  ProcessSample sample =
      timed_transfer(*backend_, plans, buffer, false, comm_,
                     c_.restore.reshard ? TransferOrder::by_file : TransferOrder::by_rank);
  if (c_.restore.reshard && sample.error.empty()) {
    // Copies out of scratch (whole_items: narrowing, as in DCP's reader; exact: strided rows)
    // are part of the restore.
    const auto narrow = Clock::now();
    apply_reshard_copies(plans, buffer_offsets(plans, buffer), buffer.memory());
    sample.seconds += seconds_since(narrow);
  }
  const IterationTiming timing = gather_timing(sample, comm_);
  charge("restore", start);
  add_notes(timing);
  if (!finish_read("restore", sample, timing, plans, buffer,
                   c_.verify && backend_->capabilities().stores_data, timings)) {
    return false;
  }
  if (phase_ == PhaseSelection::both) {
    start = Clock::now();
    if (keeping() && timings != nullptr) name_latest(planned_dir_, first_step_ + iteration);
    charge("commit", start);
    retire_checkpoints(planned_dir_, timings != nullptr);
  }
  return true;
}

// After a complete checkpoint: a keeping run removes the checkpoints a timed one replaces;
// warm-up checkpoints, and every checkpoint of a run that keeps none, go at once (earlier
// runs' checkpoints stay). Process 0 removes; everyone waits. A timed iteration's retire time
// (process 0's, until everyone has waited) is reported beside the checkpoint, never in it.
void CaseExecution::retire_checkpoints(const fs::path& current, bool timed) {
  const auto start = Clock::now();
  if (comm_.rank() == 0) {
    std::error_code ec;
    // An interrupted run's checkpoints are complete too: they supersede the older ones alike.
    const bool complete = result_.status == "ok" || result_.status == "interrupted";
    if (keeping() && timed && complete) {
      for (const fs::path& old : previous_dirs_) {
        if (old != current) fs::remove_all(old, ec);
      }
      previous_dirs_ = {current};
    } else if (!keeping() || !timed) {
      fs::remove_all(current, ec);
    }
  }
  comm_.barrier();
  if (timed) retire_s_.push_back(seconds_since(start));
  charge("retire", start);
}

void CaseExecution::progress(int i, int total, double elapsed_seconds) {
  report_.iteration = i;
  report_.iterations = total;
  report_.warmup = i < c_.warmup;
  report_.elapsed_seconds = elapsed_seconds;
  if (comm_.rank() == 0 && ctx_.on_iteration) ctx_.on_iteration(c_, report_);
}

std::optional<PhaseSummary> CaseExecution::summarize(const std::vector<IterationTiming>& timings,
                                                     bool write) const {
  if (timings.empty()) return std::nullopt;
  PhaseSummary s;
  std::vector<double> open, transfer, sync, close, copies, mkdir;
  for (const IterationTiming& t : timings) {
    if (t.latency) {
      if (!s.latency) s.latency.emplace();
      s.latency->merge(*t.latency);
    }
    s.iteration_seconds.push_back(t.seconds);
    copies.push_back(t.copy_seconds);
    open.push_back(t.phases.open);
    transfer.push_back(t.phases.transfer);
    sync.push_back(t.phases.sync);
    close.push_back(t.phases.close);
    mkdir.push_back(t.mkdir_seconds);
  }
  s.seconds = median(s.iteration_seconds);
  s.gib_per_s =
      s.seconds > 0 ? static_cast<double>(result_.bytes_per_checkpoint) / s.seconds / kGiB : 0;
  const auto closest =
      std::min_element(timings.begin(), timings.end(), [&](const auto& a, const auto& b) {
        return std::abs(a.seconds - s.seconds) < std::abs(b.seconds - s.seconds);
      });
  s.process_seconds = closest->process_seconds;
  s.rank_seconds = closest->rank_seconds;
  s.stragglers = closest->stragglers;
  s.phases = {median(open), median(transfer), median(sync), median(close)};
  s.copy_seconds = median(copies);
  if (!write) {
    std::erase_if(s.stragglers, [](const Straggler& st) { return st.phase == "mkdir"; });
    return s;
  }
  s.iteration_mkdir = mkdir;
  s.mkdir_seconds = median(mkdir);
  s.iteration_manifest = manifest_s_;
  s.manifest_seconds = median(manifest_s_);
  s.iteration_metadata = metadata_s_;
  s.metadata_seconds = median(metadata_s_);
  s.iteration_gather = gather_s_;
  s.gather_seconds = median(gather_s_);
  s.gather_bytes = gathered_.received_bytes;
  s.gather_local_bytes = gathered_.local_bytes;
  s.iteration_retire = retire_s_;
  s.retire_seconds = median(retire_s_);
  // Process 0 alone commits the manifest.
  const auto at = static_cast<std::size_t>(closest - timings.begin());
  if (at < manifest_s_.size()) s.stragglers.push_back({"manifest", 0, manifest_s_[at]});
  if (writes_dcp_metadata(c_) && at < metadata_s_.size())
    s.stragglers.push_back({"metadata", 0, metadata_s_[at]});
  return s;
}

}  // namespace ckpt::harness
