#pragma once

// The MLPerf Storage checkpointing rules a case declaring [mlperf] is held to: what they forbid
// is refused before any I/O (and by --dry-run), with the rule's number and text; what a run does
// differently from a submission makes its result non-compliant, with the reasons recorded.
// Numbers and texts are those of the MLPerf Storage validation rules (mlcommons/storage Rules.md,
// section 4, "Validating the Checkpointing Workloads"), which the v3.0 round was reviewed by.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/spec/case.hpp"

namespace ckpt::harness {

// One row of the rules' Table 2: the model ckptbench's zoo names it by, and its parallelism.
struct MlperfWorkload {
  std::string_view name;       // mlperf.model
  std::string_view zoo_model;  // model.name
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t zero = 0;
};

// The row of `name` (mlperf.model), nullptr for none.
const MlperfWorkload* mlperf_workload(std::string_view name);

// The simulated accelerator's memory in bytes (GiB as the rules' tables mean "GB"); 0: unknown.
std::uint64_t accelerator_memory_bytes(std::string_view type);

struct MlperfVerdict {
  std::vector<std::string> refusals;  // what the rules forbid: the case must not start
  std::vector<std::string> reasons;   // why the result is no submission (it still runs)
  std::string label;                  // closed | open | non-compliant
  // The read of the two-invocation workflow (--phase restore): the write invocation's end (DLIO's
  // time format, UTC; "" when unknown) and the seconds from it to this case's start.
  std::string write_ended_utc;
  std::optional<double> read_gap_seconds;
};

// What the verdict depends on beyond the case's keys.
struct MlperfRunFacts {
  PhaseSelection phase = PhaseSelection::both;  // --phase, else campaign.phase
  // The whole job's checkpoint at model.scale = 1 (Layout::checkpoint_bytes), which the
  // accelerators' memory must hold.
  std::uint64_t full_scale_bytes = 0;
  // One client host's memory (this host's: hosts are taken alike); 0 when unknown.
  std::uint64_t client_memory_bytes = 0;
};

// The verdict on case `c`, which declares `m`.
MlperfVerdict check_mlperf(const Case& c, const MlperfSpec& m, const MlperfRunFacts& facts);

// The checkpoint bytes one client host writes: the whole job's checkpoint over its hosts of
// ranks.gpus_per_node ranks each (the mean; hosts of a pipeline's first and last stages write a
// little more). What rule 4.3.1 compares with 3 x the host's memory.
std::uint64_t bytes_per_client(const Case& c, std::uint64_t full_scale_bytes);

// The most seconds rule 4.7.1 allows from the write invocation's end to the read's start.
inline constexpr double kMaxInvocationGapSeconds = 30.0;

// The read invocation's gap (`gap_seconds` from the write invocation's end at `write_ended_utc`,
// nullopt when no write invocation's end was found) into `v`: recorded, and beyond
// kMaxInvocationGapSeconds, or unknown, a reason that makes the result non-compliant.
void check_invocation_gap(MlperfVerdict& v, std::optional<double> gap_seconds,
                          const std::string& write_ended_utc);

// The record's `mlperf` object.
nlohmann::json mlperf_json(const MlperfSpec& m, const MlperfVerdict& v);

}  // namespace ckpt::harness
