#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/run_input.hpp"
#include "harness/report/tier_options.hpp"
#include "harness/report/tier_projection.hpp"

namespace ckpt::harness {

// What `ckptbench project` is told about the full-scale job.
struct ProjectionOptions {
  std::optional<std::int64_t> nodes;  // --nodes (else world_size / ranks.gpus_per_node, rounded up)
  std::optional<double>
      storage_gib_per_s;  // --storage-gib-per-s: the storage's aggregate cap (none: uncapped)
  std::optional<double> mtbf_hours;  // --mtbf-hours: the whole job's MTBF
  std::string mtbf_preset;           // --mtbf-preset llama3-16k (scaled to the job's GPUs)
  TierOptions tiers;                 // two-level intervals; the trace also gives M
};

// One case projected to the full training job. Times in seconds.
struct CaseProjection {
  const CaseRecord* c = nullptr;
  std::string name;              // "run: label" with several runs, else the label
  std::string engine;            // "sync", "async" or "lazy" (no [training]: sync)
  std::uint64_t full_bytes = 0;  // full_scale_bytes_per_checkpoint
  std::int64_t gpus = 0;  // the job's GPUs (world_size, or nodes × gpus_per_node with --nodes)
  std::int64_t nodes = 0;
  std::int64_t measured_nodes = 1;  // distinct hosts of the run
  double node_scale = 1;            // full-scale bytes per node / measured bytes per node
  double node_write_gib_s = 0;      // measured bytes per node / measured checkpoint time
  double node_read_gib_s = 0;
  double checkpoint_seconds = 0;                   // C: the stall (sync: the whole write)
  double durable_seconds = 0;                      // the checkpoint is on storage (sync: = C)
  double restore_seconds = 0;                      // R
  bool write_capped = false, read_capped = false;  // the storage bandwidth bounded them
  double mtbf_seconds = 0;                         // M
  double young_seconds = 0, daly_seconds = 0;
  double interval_seconds = 0;  // used: tau_Daly (async, lazy: at least the time to durable)
  double waste = 0;             // expected_waste at interval_seconds (share, 0..)
};

struct ProjectionModel {
  std::vector<RunRecord> runs;
  ProjectionOptions options;
  std::string mtbf_rule;  // how M was found, one sentence
  std::vector<CaseProjection> cases;
  std::optional<TierProjection> tiers;  // with --near-tier/--far-tier
};

// Throws std::runtime_error with the fix for nonsensical options (MTBF or bandwidth <= 0, nodes
// < 1, neither or both MTBF options, an unknown preset) and for a case without what a projection
// needs (naming the results file and line, the field and how to get it). Failed cases are skipped.
ProjectionModel build_projection(std::vector<RunRecord> runs, const ProjectionOptions& options);

// One case projected with `options` (which give M as mtbf_hours or the preset); throws like
// build_projection for a case without what a projection needs.
CaseProjection project_case(const CaseRecord& c, const ProjectionOptions& options,
                            bool several_runs);

// "42.1 s", "12.5 min" (from 2 minutes), "3.09 h" (from 2 hours), "4.50 days" (from 2 days),
// "12.0 years" (from 2 years), "1.2e+07 years" (from a million years).
std::string format_interval(double seconds);
// The share of training time lost as a percentage, "56.54%"; "> 1000%" from 10.
std::string format_waste(double waste);

// The text (or Markdown) table and the rules it used.
void print_projection(const ProjectionModel& model, bool markdown, std::ostream& out);
// One self-contained HTML page: the table and, per case, waste against the interval as inline
// SVG with tau_Young, tau_Daly (and the time to durable for async engines) marked.
std::string projection_html(const ProjectionModel& model);
// The page's content without the page: a `heading` ("h2") "Full-scale checkpoint cost" with the
// table and rules, then per case a `subheading` waste-against-interval chart. Also what
// `report` adds to its page when given projection options.
std::string projection_section_html(const ProjectionModel& model, const std::string& heading,
                                    const std::string& subheading);

}  // namespace ckpt::harness
