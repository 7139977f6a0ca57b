#include "harness/run/case_result.hpp"

#include "harness/run/manifest.hpp"

namespace ckpt::harness {
namespace {

nlohmann::json spread_json(const Spread& s) { return {{"min", s.min}, {"median", s.median}, {"max", s.max}}; }

nlohmann::json phases_json(const PhaseSummary& p) {
  return {{"open", p.phases.open}, {"transfer", p.phases.transfer}, {"sync", p.phases.sync},
          {"close", p.phases.close}, {"manifest", p.manifest_seconds}};
}

// Device staging: the copy seconds of a phase that ran, else null.
nlohmann::json staging_copies(const CaseResult& r, const std::optional<PhaseSummary>& p) {
  return !r.staging.empty() && p ? nlohmann::json(p->copy_seconds) : nlohmann::json(nullptr);
}

nlohmann::json staging_json(const CaseResult& r) {
  if (r.staging.empty()) return nullptr;
  return {{"mode", r.staging}, {"chunk_bytes", r.config.staging.chunk_bytes}, {"buffers", r.config.staging.buffers}};
}

nlohmann::json optional_number(const std::optional<PhaseSummary>& p, double PhaseSummary::*field) {
  return p ? nlohmann::json((*p).*field) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const CaseResult& r) {
  const Case& c = r.config;
  nlohmann::json j{{"campaign", c.campaign},
                   {"case_index", c.index},
                   {"case", c.swept},
                   {"status", r.status},
                   {"error", r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error)},
                   {"model", c.model.name},
                   {"backend", c.backend},
                   {"strategy", mapping_name(c.mapping)},
                   {"directory_layout", directory_layout_name(c.directory_layout)},
                   {"ranks", r.processes},
                   {"world_size", r.world_size},
                   {"modeled_ranks", r.modeled_ranks},
                   {"scale", c.scale},
                   {"bytes_per_checkpoint", r.bytes_per_checkpoint},
                   {"padding_bytes", r.padding_bytes},
                   {"files_per_checkpoint", r.files_per_checkpoint},
                   {"extents_per_checkpoint", r.extents_per_checkpoint},
                   {"memory_bytes_per_process", r.memory_bytes_per_process},
                   {"write_gib_per_s", optional_number(r.write, &PhaseSummary::gib_per_s)},
                   {"read_gib_per_s", optional_number(r.read, &PhaseSummary::gib_per_s)},
                   {"write_seconds", optional_number(r.write, &PhaseSummary::seconds)},
                   {"read_seconds", optional_number(r.read, &PhaseSummary::seconds)},
                   {"memory_space", memory_space_name(c.memory_space)},
                   {"staging", staging_json(r)},
                   {"d2h_seconds", staging_copies(r, r.write)},
                   {"h2d_seconds", staging_copies(r, r.read)},
                   {"verified", r.verified},
                   {"verify_seconds", r.verify_seconds},
                   {"fill_seconds", r.fill_seconds},
                   {"iterations", c.iterations},
                   {"warmup", c.warmup},
                   {"cache_policy", r.cache_policy_applied},
                   {"checkpoint_dir", r.checkpoint_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.checkpoint_dir)},
                   {"config_hash", config_hash(c)},
                   {"config", c.config},
                   {"notes", r.notes},
                   {"environment", r.environment}};
  j["environment"]["config_hash"] = j["config_hash"];
  j["environment"]["cache_policy"] = r.cache_policy_applied;
  nlohmann::json phases = nlohmann::json::object();
  nlohmann::json per_process = nlohmann::json::object();
  nlohmann::json per_rank = nlohmann::json::object();
  nlohmann::json iterations = nlohmann::json::object();
  if (r.write) {
    phases["write"] = phases_json(*r.write);
    if (!r.staging.empty()) phases["write"]["d2h"] = r.write->copy_seconds;
    per_process["write_seconds"] = spread_json(r.write->process_seconds);
    per_rank["write_seconds"] = spread_json(r.write->rank_seconds);
    iterations["write_seconds"] = r.write->iteration_seconds;
  }
  if (r.read) {
    phases["read"] = phases_json(*r.read);
    if (!r.staging.empty()) phases["read"]["h2d"] = r.read->copy_seconds;
    per_process["read_seconds"] = spread_json(r.read->process_seconds);
    per_rank["read_seconds"] = spread_json(r.read->rank_seconds);
    iterations["read_seconds"] = r.read->iteration_seconds;
  }
  j["phases"] = phases;
  j["per_process"] = per_process;
  j["per_rank"] = per_rank;
  j["samples"] = iterations;
  return j;
}

}  // namespace ckpt::harness
