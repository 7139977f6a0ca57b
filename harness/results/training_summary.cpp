#include "harness/results/training_summary.hpp"

#include <algorithm>
#include <functional>

#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

double committed_median(const TrainingSummary& s, double CheckpointRecord::*field) {
  std::vector<double> values;
  for (const CheckpointRecord& r : s.checkpoints) {
    if (r.committed) values.push_back(r.*field);
  }
  return median(values);
}

nlohmann::json span_json(const TimeSpan& s) {
  return s.ran() ? nlohmann::json::array({s.start, s.end}) : nlohmann::json(nullptr);
}

nlohmann::json times_json(const CheckpointTimes& t) {
  return {{"due", t.due},
          {"resumed", t.resumed},
          {"snapshot", span_json(t.snapshot)},
          {"flush", span_json(t.flush)},
          {"commit", span_json(t.commit)}};
}

nlohmann::json iteration_times_json(const std::vector<IterationTimes>& times) {
  nlohmann::json out = nlohmann::json::array();
  for (const IterationTimes& t : times) {
    out.push_back({{"start", t.start},
                   {"compute_end", t.compute_end},
                   {"update_start", t.update_start},
                   {"end", t.end}});
  }
  return out;
}

// The tiered engine's part of a checkpoint's record.
void add_tier_fields(nlohmann::json& out, const CheckpointRecord& r) {
  out["tier_memory_seconds"] = r.tier_memory_seconds;
  out["tier_local_seconds"] = r.tier_local_seconds;
  out["tier_replicated_seconds"] = r.tier_replicated_seconds;
  out["interconnect_bytes"] = r.interconnect_bytes;
  out["local_tier_bytes"] = r.local_tier_bytes;
  out["tiers"] = r.tiers;
}

// The tiered engine's layout with medians over the checkpoints some tier holds complete.
nlohmann::json tiers_json(const TierLayoutRecord& t, const std::vector<CheckpointRecord>& records) {
  std::vector<double> memory, local, replicated;
  std::uint64_t interconnect = 0;
  for (const CheckpointRecord& r : records) {
    interconnect += r.interconnect_bytes;
    if (r.tiers.empty()) continue;
    memory.push_back(r.tier_memory_seconds);
    local.push_back(r.tier_local_seconds);
    replicated.push_back(r.tier_replicated_seconds);
  }
  return {{"processes_per_node", t.processes_per_node},
          {"nodes", t.nodes},
          {"replicas", t.replicas},
          {"clique_stride", t.clique_stride},
          {"drain_every", t.drain_every},
          {"local_dir", t.local_dir},
          {"memory", t.memory},
          {"memory_seconds", t.memory ? median(memory) : 0.0},
          {"local_seconds", median(local)},
          {"replicated_seconds", median(replicated)},
          {"interconnect_bytes", interconnect}};
}

nlohmann::json recovery_json(const RecoveryRecord& r) {
  return {{"lost_nodes", r.lost_nodes},
          {"iteration", r.iteration},
          {"seconds", r.seconds},
          {"bytes",
           {{"memory", r.memory_bytes},
            {"local", r.local_bytes},
            {"peer", r.peer_bytes},
            {"remote", r.remote_bytes}}},
          {"parts",
           {{"memory", r.memory_parts},
            {"local", r.local_parts},
            {"peer", r.peer_parts},
            {"remote", r.remote_parts}}},
          {"peer_parts_from_memory", r.peer_parts_from_memory},
          {"seconds_by_source",
           {{"memory", r.memory_seconds},
            {"local", r.local_seconds},
            {"peer", r.peer_seconds},
            {"remote", r.remote_seconds}}},
          {"restarted", r.restarted}};
}

}  // namespace

double TrainingSummary::stall_seconds() const {
  return committed_median(*this, &CheckpointRecord::stall_seconds);
}
double TrainingSummary::time_to_durable_seconds() const {
  return committed_median(*this, &CheckpointRecord::time_to_durable_seconds);
}
double TrainingSummary::snapshot_seconds() const {
  return committed_median(*this, &CheckpointRecord::snapshot_seconds);
}
double TrainingSummary::gather_seconds() const {
  return committed_median(*this, &CheckpointRecord::gather_seconds);
}
double TrainingSummary::flush_gib_s() const {
  return committed_median(*this, &CheckpointRecord::flush_gib_s);
}

std::optional<double> TrainingSummary::iteration_inflation() const {
  if (plain_iteration_seconds.empty() || flushing_iteration_seconds.empty()) return std::nullopt;
  const double plain = median(plain_iteration_seconds);
  if (plain <= 0) return std::nullopt;
  return median(flushing_iteration_seconds) / plain - 1;
}

nlohmann::json to_json(const TrainingSummary& s) {
  nlohmann::json checkpoints = nlohmann::json::array();
  for (const CheckpointRecord& r : s.checkpoints) {
    checkpoints.push_back({{"iteration", r.iteration},
                           {"stall_seconds", r.stall_seconds},
                           {"gather_seconds", r.gather_seconds},
                           {"snapshot_seconds", r.snapshot_seconds},
                           {"backpressure_seconds", r.backpressure_seconds},
                           {"ring_wait_seconds", r.ring_wait_seconds},
                           {"time_to_durable_seconds", r.time_to_durable_seconds},
                           {"flush_seconds", r.flush_seconds},
                           {"flush_gib_s", r.flush_gib_s},
                           {"committed", r.committed},
                           {"times", times_json(r.times)}});
    if (s.tiers) add_tier_fields(checkpoints.back(), r);
  }
  const std::optional<double> inflation = s.iteration_inflation();
  nlohmann::json j = {
      {"engine", s.engine},
      {"stall_seconds", s.stall_seconds()},
      {"time_to_durable_seconds", s.time_to_durable_seconds()},
      {"snapshot_seconds", s.snapshot_seconds()},
      {"gather_seconds", s.gather_seconds()},
      {"gather_bytes", s.gather_bytes},
      {"gather_local_bytes", s.gather_local_bytes},
      {"flush_gib_s", s.flush_gib_s()},
      {"iteration_inflation", inflation ? nlohmann::json(*inflation) : nlohmann::json(nullptr)},
      {"plain_iteration_seconds", s.plain_iteration_seconds},
      {"flushing_iteration_seconds", s.flushing_iteration_seconds},
      {"iteration_times", iteration_times_json(s.iteration_times)},
      {"host_pool_bytes", s.host_pool_bytes},
      {"pool_high_water_bytes", s.pool_high_water_bytes},
      {"pool_chunk_bytes", s.pool_chunk_bytes},
      {"pool_chunks", s.pool_chunks},
      {"committed_iteration", s.committed_iteration},
      {"committed_dir", s.committed_dir},
      {"loop_seconds", s.loop_seconds},
      {"interrupted", s.interrupted},
      {"checkpoints", checkpoints}};
  if (!s.counters.empty()) j["counters"] = s.counters;
  if (s.tiers) j["tiers"] = tiers_json(*s.tiers, s.checkpoints);
  if (s.recovery) j["recovery"] = recovery_json(*s.recovery);
  return j;
}

}  // namespace ckpt::harness
