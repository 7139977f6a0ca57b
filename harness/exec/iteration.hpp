#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/comm/comm.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/results/case_result.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {

// One process's timing of one write or read of its ranks' plans.
struct ProcessSample {
  double seconds = 0;     // from the barrier: mkdir (write) and every backend call
  double start_wall = 0;  // when `seconds` began: system_clock seconds since the epoch (0: unknown)
  double mkdir_seconds =
      0;  // write: creating the files' directories, until every process has its own
  std::vector<double> rank_seconds;  // each modeled rank's plan, as the backend timed it
  backends::PhaseTimes phases;
  std::string error;
  std::vector<std::string> notes;  // the backend's notes (fallbacks), without repeats
  double copy_seconds =
      0;  // device staging: device -> host (write) or host -> device (read) copies
  std::optional<backends::LatencyHistogram>
      latency;  // measure.latency: every request of every plan
  // The backend's counters (Backend::counters: an object store's requests by kind, retries,
  // throttling), summed over every call of this process.
  std::map<std::string, std::uint64_t> counters;
  // This process's CPU time (every thread's) from the barrier to the end of `seconds`.
  double cpu_user_seconds = 0;
  double cpu_system_seconds = 0;
};

// This process's user and system CPU seconds so far, every thread's (getrusage RUSAGE_SELF).
struct CpuSeconds {
  double user = 0;
  double system = 0;
  // The CPU time since `before` into the sample's cpu_*_seconds.
  static void charge_since(const CpuSeconds& before, ProcessSample& sample);
};
CpuSeconds process_cpu_seconds();

// Times one write (or read) of every plan into/from its part of `buffer`, starting after a
// barrier: one backend call per plan, or one per process (process_plan) for a collective backend,
// whose time then counts for each of the process's ranks. A buffer with a stager (device memory
// the backend cannot address) goes through it, the copies inside the time. A write first creates
// the directories of its files (the mkdir phase, inside the time as in every framework's save);
// the processes agree on a failure there, so none enters the transfer alone, and it becomes the
// sample's error.
//
// `order` = by_file (resharding restores): the process's share as one call even for a backend that
// is not collective, each file's extents in file-offset order (process_plan_in_file_order), as a
// node whose ranks read together reads each stored file front to back; one rank after another
// would skip through every file once per new rank that needs a part of it.
enum class TransferOrder { by_rank, by_file };
ProcessSample timed_transfer(backends::Backend& backend, const std::vector<RankPlan>& plans,
                             const ProcessBuffer& buffer, bool write, Comm& comm,
                             TransferOrder order = TransferOrder::by_rank);

// One process's timed window: its wall-clock start and its own (steady-clock) duration.
struct ProcessWindow {
  double start_wall = 0;
  double seconds = 0;
};

// IOR's aggregate time: latest end − earliest start over the processes' windows (end = start +
// seconds), never less than the slowest process's own duration (a wall clock stepped back, or a
// window without a start). The processes leave the start barrier at different moments; a
// process that leaves it late still ends late, so the maximum of the durations alone misses
// that skew.
double aggregate_seconds(const std::vector<ProcessWindow>& windows);

// Every process's sample at process 0, combined per IOR: aggregate seconds = latest end −
// earliest start (aggregate_seconds; all start at the barrier); phase times = the slowest
// process's. Elsewhere empty.
struct IterationTiming {
  double seconds = 0;
  double process0_seconds = 0;  // process 0's own duration: what DLIO times a checkpoint by
  Spread process_seconds;
  Spread rank_seconds;
  backends::PhaseTimes phases;
  double mkdir_seconds = 0;  // the slowest process's
  std::vector<Straggler>
      stragglers;  // per phase, in the order of Straggler::phase (mkdir only for writes)
  std::string first_error;
  std::vector<std::string> notes;  // every process's notes, without repeats
  double copy_seconds = 0;         // the slowest process's staging copies
  std::optional<backends::LatencyHistogram>
      latency;  // measure.latency: every process's requests merged
  std::map<std::string, std::uint64_t> counters;  // every process's, summed
  int processes = 0;                              // the samples gathered
  double cpu_user_seconds = 0;                    // every process's, summed
  double cpu_system_seconds = 0;
};
IterationTiming gather_timing(const ProcessSample& mine, Comm& comm);

// Checks every shard of `plans` against its deterministic contents. Returns the first
// problem ("tensor <name> (<state>, rank R) at byte B: expected 0x.., found 0x..") or "".
std::string verify_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer,
                         DataPattern pattern);

// Where each plan's part of `buffer` starts.
std::vector<std::uint64_t> buffer_offsets(const std::vector<RankPlan>& plans,
                                          const ProcessBuffer& buffer);

// Per-shard checksums of `plans` as `buffer` holds them (the manifest's).
std::vector<std::vector<std::uint64_t>> shard_checksums(const std::vector<RankPlan>& plans,
                                                        const ProcessBuffer& buffer);

// Fills every shard of `plans` with its deterministic contents; returns per-shard checksums.
std::vector<std::vector<std::uint64_t>> fill_plans(const std::vector<RankPlan>& plans,
                                                   ProcessBuffer& buffer, DataPattern pattern);

// engines (harness/engine) share these with the iterations of harness/run:
// The directories of every file of `plans`, created. Returns the first problem, or "".
std::string create_parent_directories(const std::vector<RankPlan>& plans);
// Points every file of `plans` from directory `from` into directory `to`.
void retarget(std::vector<RankPlan>& plans, const std::filesystem::path& from,
              const std::filesystem::path& to);

}  // namespace ckpt::harness
