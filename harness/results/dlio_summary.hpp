#pragma once

// The summary.json DLIO writes at the end of a checkpointing run, written by ckptbench for an
// [mlperf] case beside results.jsonl, so that MLPerf Storage's tooling (mlpstorage's report
// generator, which reads `metric.save_checkpoint_io_mean_GB_per_second` and its kin) reads a
// ckptbench run as it reads DLIO's. The keys are DLIO's (dlio_benchmark StatsCounter.end_run);
// where ckptbench knows better what a key means for checkpoints, docs/mlperf.md says so.
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/results/case_result.hpp"

namespace ckpt::harness {

// DLIO's timestamp: "2026-07-18T01:24:16.352638", here always UTC.
std::string dlio_time(std::chrono::system_clock::time_point t);

// `key: value` lines of a /proc file as DLIO's lines_to_dict reads them (a later key replaces an
// earlier one, "processor" left out); {} when the file cannot be read.
nlohmann::json proc_key_values(const std::string& path);

// The summary of case `r` (its write and/or read phase; the metric keys of a phase that did not
// run are left out rather than written as NaN, as DLIO does).
nlohmann::json dlio_summary_json(const CaseResult& r);

}  // namespace ckpt::harness
