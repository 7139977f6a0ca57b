#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/common/json_input.hpp"
#include "harness/results/training_summary.hpp"

namespace ckpt::harness {

// Seconds from the training loop's start (results/SCHEMA.md, `training.iteration_times`).
struct LoopSpan {
  double start = 0, end = 0;
};

// One iteration of the loop: compute [start, compute_end), the wait for lazy's copy
// [compute_end, update_start), the update [update_start, end).
struct LoopIteration {
  double start = 0, compute_end = 0, update_start = 0, end = 0;
};

// One entry of `training.checkpoints`.
struct LoopCheckpoint {
  std::int64_t iteration = 0;
  double stall_seconds = 0;
  double time_to_durable_seconds = 0;
  double flush_gib_s = 0;
  bool committed = false;
  // `times` (absent in results written before the loop recorded them).
  bool timed = false;
  double due = 0, resumed = 0;
  std::optional<LoopSpan> snapshot, flush, commit;
};

// A [training] case's `training` object as the report reads it.
struct TrainingRecord {
  std::string engine;
  double flush_gib_s = 0;  // the median the console quotes
  std::vector<LoopCheckpoint> checkpoints;
  std::vector<LoopIteration> iterations;  // empty in results without `iteration_times`
  // training.recovery (a tiered job that lost nodes); the memory source and the seconds by
  // source are 0 in results written before they were recorded.
  std::optional<RecoveryRecord> recovery;

  // `field` of every committed checkpoint, in order; flush_gib_s only where it is above 0 (a
  // flush that wrote nothing has no rate), as the console's write cell takes them.
  std::vector<double> committed(double LoopCheckpoint::*field) const;
  // The loop's timestamps are there to draw.
  bool has_timeline() const { return !iterations.empty(); }
};

// Throws ConfigError naming the file, line and key for a field of the wrong type.
TrainingRecord parse_training(const JsonField& training);

}  // namespace ckpt::harness
