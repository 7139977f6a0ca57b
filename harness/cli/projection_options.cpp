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
}

bool projection_requested(const ProjectionOptions& o) {
  return o.nodes.has_value() || o.storage_gib_per_s.has_value() || o.mtbf_hours.has_value() ||
         !o.mtbf_preset.empty();
}

}  // namespace ckpt::harness
