#include "harness/cli/projection_options.hpp"

#include <fmt/format.h>

#include "harness/report/projection_formulas.hpp"

namespace ckpt::harness {

void add_projection_options(CLI::App* cmd, ProjectionOptions& o) {
  cmd->add_option("--nodes", o.nodes,
                  "Nodes of the full job (default: world_size / ranks.gpus_per_node, rounded up)");
  cmd->add_option("--storage-gib-per-s", o.storage_gib_per_s,
                  "Aggregate bandwidth of the storage system, GiB/s: bounds the full-scale "
                  "checkpoint and restore (default: "
                  "uncapped)");
  cmd->add_option("--mtbf-hours", o.mtbf_hours,
                  "Mean time between failures of the whole job, hours");
  cmd->add_option("--mtbf-preset", o.mtbf_preset,
                  fmt::format("MTBF from a published job, scaled to this job's GPUs: {} ({} "
                              "interruptions in {} days on "
                              "{} GPUs)",
                              kLlama3Preset.name, kLlama3Preset.interruptions, kLlama3Preset.days,
                              kLlama3Preset.gpus));
  TierOptions& t = o.tiers;
  const char* tier_form =
      "KEY=VALUE[,KEY=VALUE...] picking one case of the runs (run=NAME, swept or campaign keys), "
      "or stall=S,durable=S,restore=S in seconds at full scale";
  cmd->add_option("--near-tier", t.near,
                  fmt::format("Two-level intervals: the near tier (node memory, node-local disk, "
                              "peers), written every k steps: {}",
                              tier_form))
      ->option_text("SPEC");
  cmd->add_option("--far-tier", t.far,
                  fmt::format("Two-level intervals: the far tier (remote storage) that every "
                              "K-th near checkpoint also goes to: {}",
                              tier_form))
      ->option_text("SPEC");
  cmd->add_option("--step-seconds", t.step_seconds,
                  "One training step, seconds: the unit of k (default: the near tier case's "
                  "training.iteration_seconds)");
  cmd->add_option("--near-recoverable", t.near_recoverable,
                  "Share of failures the near tier's copies survive, 0 to 1 (needed with tiers)");
  cmd->add_option("--mc-trials", t.trials, "Monte Carlo trials of the tiered job")
      ->capture_default_str();
  cmd->add_option("--mc-seed", t.seed, "Monte Carlo seed")->capture_default_str();
  cmd->add_option("--job-days", t.job_days, "Length of each Monte Carlo trial, days")
      ->capture_default_str();
  cmd->add_option("--failure-trace", t.failure_trace,
                  "Failure times instead of exponential ones: one per line, hours from the "
                  "job's start, below --job-days; gives M too")
      ->option_text("FILE");
}

bool projection_requested(const ProjectionOptions& o) {
  return o.nodes.has_value() || o.storage_gib_per_s.has_value() || o.mtbf_hours.has_value() ||
         !o.mtbf_preset.empty() || o.tiers.requested() || !o.tiers.failure_trace.empty();
}

}  // namespace ckpt::harness
