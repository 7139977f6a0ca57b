#pragma once

// DLIO's (and so MLPerf Storage's) checkpoint throughput, printed beside ckptbench's. DLIO
// times each checkpoint by rank 0's own save (or load) and divides the whole checkpoint's size
// by it; its summary is the mean and standard deviation of those per-checkpoint rates.
// ckptbench's aggregate divides every process's bytes by latest end - earliest start, which
// counts the slowest process and the skew of their starts (docs/mlperf.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

namespace ckpt::harness {

struct DlioMetrics {
  std::vector<double> seconds;    // process 0's duration per checkpoint
  std::vector<double> gib_per_s;  // per checkpoint: the checkpoint's bytes / seconds / 2^30
  double mean_gib_per_s = 0;
  double stdev_gib_per_s = 0;  // population standard deviation (numpy's default, as DLIO's)
  double mean_seconds = 0;
  double stdev_seconds = 0;  // population standard deviation of `seconds`
};

// The metrics of checkpoints of `bytes` each whose process 0 took `process0_seconds`; a
// duration of 0 or less counts as no rate (left out of the rates and their mean).
DlioMetrics dlio_metrics(std::uint64_t bytes, const std::vector<double>& process0_seconds);

nlohmann::json to_json(const DlioMetrics& m);

}  // namespace ckpt::harness
