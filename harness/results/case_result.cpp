#include "harness/results/case_result.hpp"

#include <algorithm>

#include "harness/common/elapsed.hpp"
#include "harness/results/dlio_metrics.hpp"
#include "harness/results/schema_version.hpp"
#include "harness/results/stats.hpp"
#include "harness/results/workload_hash.hpp"

namespace ckpt::harness {
namespace {

nlohmann::json spread_json(const Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

nlohmann::json phases_json(const PhaseSummary& p, bool write) {
  nlohmann::json j{{"open", p.phases.open},
                   {"transfer", p.phases.transfer},
                   {"sync", p.phases.sync},
                   {"close", p.phases.close}};
  if (write) {
    j["mkdir"] = p.mkdir_seconds;
    j["manifest"] = p.manifest_seconds;
    j["metadata"] = p.metadata_seconds;
    j["gather"] = p.gather_seconds;
    j["retire"] = p.retire_seconds;
  }
  if (!p.counters.empty()) j["counters"] = p.counters;
  return j;
}

// {"open": {"process": 1, "host": "node7", "seconds": 0.012}, ...}
nlohmann::json stragglers_json(const PhaseSummary& p, const std::vector<std::string>& hosts) {
  nlohmann::json j = nlohmann::json::object();
  for (const Straggler& s : p.stragglers) {
    const auto process = static_cast<std::size_t>(s.process);
    j[s.phase] = {
        {"process", s.process},
        {"host", process < hosts.size() ? nlohmann::json(hosts[process]) : nlohmann::json(nullptr)},
        {"seconds", s.seconds}};
  }
  return j;
}

// {"node7": 2, "node8": 2}
nlohmann::json processes_per_host(const std::vector<std::string>& hosts) {
  nlohmann::json j = nlohmann::json::object();
  for (const std::string& h : hosts) j[h] = j.value(h, 0) + 1;
  return j;
}

nlohmann::json wall_json(const WallTime& w) {
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& [part, seconds] : w.parts) parts[part] = seconds;
  return {{"seconds", w.seconds},
          {"covered_seconds", w.covered()},
          {"covered_percent", w.covered_percent()},
          {"parts", parts}};
}

// Device staging: the copy seconds of a phase that ran, else null.
nlohmann::json staging_copies(const CaseResult& r, const std::optional<PhaseSummary>& p) {
  return !r.staging.empty() && p ? nlohmann::json(p->copy_seconds) : nlohmann::json(nullptr);
}

nlohmann::json staging_json(const CaseResult& r) {
  if (r.staging.empty()) return nullptr;
  return {{"mode", r.staging},
          {"chunk_bytes", r.config.staging.chunk_bytes},
          {"buffers", r.config.staging.buffers}};
}

// measure.latency: request count, mean and percentiles in seconds (results/SCHEMA.md).
nlohmann::json latency_json(const backends::LatencyHistogram& h) {
  constexpr double kNs = 1e-9;
  return {{"requests", h.count()},
          {"mean_seconds", h.mean() * kNs},
          {"min_seconds", static_cast<double>(h.min()) * kNs},
          {"p50_seconds", static_cast<double>(h.percentile(0.50)) * kNs},
          {"p99_seconds", static_cast<double>(h.percentile(0.99)) * kNs},
          {"p999_seconds", static_cast<double>(h.percentile(0.999)) * kNs},
          {"max_seconds", static_cast<double>(h.max()) * kNs}};
}

nlohmann::json optional_number(const std::optional<PhaseSummary>& p, double PhaseSummary::*field) {
  return p ? nlohmann::json((*p).*field) : nlohmann::json(nullptr);
}

// GiB/s of each sample: bytes / seconds / 2^30.
nlohmann::json rates(std::uint64_t bytes, const std::vector<double>& seconds) {
  nlohmann::json out = nlohmann::json::array();
  for (double s : seconds) out.push_back(s > 0 ? static_cast<double>(bytes) / s / kGiB : 0.0);
  return out;
}

// The median of `samples`, null without any.
nlohmann::json median_or_null(const std::vector<double>& samples) {
  return samples.empty() ? nlohmann::json(nullptr) : nlohmann::json(median(samples));
}

nlohmann::json compression_json(const CompressionSummary& z) {
  const auto ratio = z.stored_bytes > 0 ? static_cast<double>(z.logical_bytes) /
                                              static_cast<double>(z.stored_bytes)
                                        : 0.0;
  return {
      {"codec", z.codec},
      {"level", z.level},
      {"unit", z.unit},
      {"chunk_bytes", z.unit == "chunk" ? nlohmann::json(z.chunk_bytes) : nlohmann::json(nullptr)},
      {"threads", z.threads},
      {"logical_bytes", z.logical_bytes},
      {"stored_bytes", z.stored_bytes},
      {"ratio", ratio},
      {"encode_seconds", median_or_null(z.encode_seconds)},
      {"encode_cpu_seconds", median_or_null(z.encode_cpu_seconds)},
      {"decode_seconds", median_or_null(z.decode_seconds)},
      {"decode_cpu_seconds", median_or_null(z.decode_cpu_seconds)},
      {"samples",
       {{"encode_seconds", z.encode_seconds},
        {"encode_cpu_seconds", z.encode_cpu_seconds},
        {"encode_gib_per_s", rates(z.logical_bytes, z.encode_seconds)},
        {"decode_seconds", z.decode_seconds},
        {"decode_cpu_seconds", z.decode_cpu_seconds}}}};
}

nlohmann::json selective_json(const SelectiveSummary& z) {
  std::vector<double> fractions;
  for (const std::uint64_t bytes : z.written_bytes)
    fractions.push_back(
        z.full_bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(z.full_bytes) : 0.0);
  nlohmann::json restore = nullptr;
  if (!z.restored.empty()) {
    const nlohmann::json amplification =
        z.full_bytes > 0 ? nlohmann::json(static_cast<double>(z.restore_read_bytes) /
                                          static_cast<double>(z.full_bytes))
                         : nlohmann::json(nullptr);
    restore = {{"checkpoint", z.restored},
               {"read_from", z.restored_from},
               {"oldest_needed", z.restored_from.empty() ? z.restored : z.restored_from.front()},
               {"chain_length", z.restore_chain_length},
               {"read_bytes", z.restore_read_bytes},
               {"amplification", amplification}};
  }
  return {{"every", z.every},
          {"experts", z.experts},
          {"delta_every", z.delta_every},
          {"full_bytes", z.full_bytes},
          {"written_fraction", median_or_null(fractions)},
          {"samples",
           {{"written_bytes", z.written_bytes},
            {"oldest_needed", z.oldest_needed},
            {"chain_length", z.chain_length}}},
          {"restore", restore}};
}

nlohmann::json calibration_json(const std::optional<CalibrationRecord>& c) {
  if (!c) return nullptr;
  return {{"method", kCalibrationMethod},
          {"bytes", c->bytes},
          {"write_gib_per_s", rates(c->bytes, c->write_seconds)},
          {"read_gib_per_s", rates(c->bytes, c->read_seconds)},
          {"write_seconds", c->write_seconds},
          {"read_seconds", c->read_seconds}};
}

}  // namespace

void WallTime::add(const std::string& part, double part_seconds) {
  const auto it =
      std::find_if(parts.begin(), parts.end(), [&](const auto& p) { return p.first == part; });
  if (it == parts.end()) {
    parts.emplace_back(part, part_seconds);
  } else {
    it->second += part_seconds;
  }
}

double WallTime::covered() const {
  double sum = 0;
  for (const auto& p : parts) sum += p.second;
  return sum;
}

double WallTime::covered_percent() const {
  return seconds > 0 ? 100 * covered() / seconds : 0;
}

namespace {

// DLIO's per-checkpoint rates beside the aggregate (dlio_metrics).
nlohmann::json dlio_json(const CaseResult& r) {
  nlohmann::json j = nlohmann::json::object();
  if (r.write)
    j["write"] = to_json(dlio_metrics(r.bytes_per_checkpoint, r.write->iteration_process0_seconds));
  if (r.read)
    j["read"] = to_json(dlio_metrics(r.bytes_per_checkpoint, r.read->iteration_process0_seconds));
  return j;
}

}  // namespace

IntegrityInputs integrity_inputs(const CaseResult& r) {
  const auto cpu = [](const std::optional<PhaseSummary>& p) {
    return p ? std::optional<PhaseCpu>(p->cpu) : std::nullopt;
  };
  return {.record = r.integrity,
          .write = cpu(r.write),
          .read = cpu(r.read),
          .reads = r.read.has_value(),
          .cache_policy = r.cache_policy_applied,
          .generation = {r.bytes_per_checkpoint, r.fill_seconds}};
}

nlohmann::json to_json(const CaseResult& r) {
  const Case& c = r.config;
  nlohmann::json j{{"schema_version", kResultsSchemaVersion},
                   {"campaign", c.campaign},
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
                   {"full_scale_bytes_per_checkpoint", r.full_scale_bytes},
                   {"padding_bytes", r.padding_bytes},
                   {"files_per_checkpoint", r.files_per_checkpoint},
                   {"extents_per_checkpoint", r.extents_per_checkpoint},
                   {"memory_bytes_per_process", r.memory_bytes_per_process},
                   {"write_gib_per_s", optional_number(r.write, &PhaseSummary::gib_per_s)},
                   {"read_gib_per_s", optional_number(r.read, &PhaseSummary::gib_per_s)},
                   {"write_seconds", optional_number(r.write, &PhaseSummary::seconds)},
                   {"read_seconds", optional_number(r.read, &PhaseSummary::seconds)},
                   {"retire_seconds", optional_number(r.write, &PhaseSummary::retire_seconds)},
                   {"stores_data", r.stores_data},
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
                   {"checkpoint_dir", r.checkpoint_dir.empty() ? nlohmann::json(nullptr)
                                                               : nlohmann::json(r.checkpoint_dir)},
                   {"config_hash", config_hash(c)},
                   {"workload_hash", workload_hash(c)},
                   {"config", c.config},
                   {"notes", r.notes},
                   {"wall_time", wall_json(r.wall)},
                   {"environment", r.environment}};
  if (!r.store_requests.empty()) j["store_requests"] = r.store_requests;
  if (!r.store_requests_max.empty()) j["store_requests_max"] = r.store_requests_max;
  if (!r.visible_seconds.empty()) j["checkpoint_visible_seconds"] = r.visible_seconds;
  j["calibration"] = calibration_json(r.calibration);    // measure.calibration (ckptbench gate)
  if (r.training) j["training"] = to_json(*r.training);  // [training] cases (harness/engine)
  if (c.mlperf && r.mlperf) j["mlperf"] = mlperf_json(*c.mlperf, *r.mlperf);
  j["dlio"] = dlio_json(r);
  j["integrity"] = integrity_json(integrity_inputs(r));
  if (r.reshard) {
    const ReshardSummary& s = *r.reshard;
    j["reshard"] = {{"from", s.from},
                    {"to", s.to},
                    {"read", s.read},
                    {"bytes_needed", s.bytes_needed},
                    {"bytes_read", s.bytes_read},
                    {"amplification", s.amplification()},
                    {"padding_bytes", s.padding_bytes},
                    {"requests", s.requests},
                    {"copied_bytes", s.copied_bytes},
                    {"gap_bytes", s.gap_bytes},
                    {"direct_alignment", s.direct_alignment},
                    {"per_rank_bytes_read", spread_json(s.rank_bytes_read)},
                    {"per_rank_requests", spread_json(s.rank_requests)}};
  }
  if (r.compression) j["compression"] = compression_json(*r.compression);
  if (r.selective) j["selective"] = selective_json(*r.selective);
  if (r.quantized_weights) {
    const QuantizedWeightsSummary& q = *r.quantized_weights;
    const double plain = static_cast<double>(q.unquantized_bytes);
    j["quantized_weights"] = {
        {"format", q.format},
        {"bytes", q.bytes},
        {"unquantized_bytes", q.unquantized_bytes},
        {"saved_bytes", q.unquantized_bytes - q.bytes},
        {"saved_fraction", plain > 0 ? (plain - static_cast<double>(q.bytes)) / plain : 0.0}};
  }
  if (r.replicas) {
    const ReplicaSummary& s = *r.replicas;
    j["replicas"] = {{"mode", s.mode},
                     {"held_bytes", s.held_bytes},
                     {"storage_bytes", s.storage_bytes},
                     {"interconnect_bytes", s.interconnect_bytes},
                     {"copied_bytes", s.copied_bytes},
                     {"rounds", s.rounds}};
  }
  if (r.load) {
    const LoadSummary& s = *r.load;
    const auto gib_per_s = [&s](double seconds) {
      return seconds > 0 ? static_cast<double>(s.bytes) / seconds / kGiB : 0.0;
    };
    std::vector<double> rates;
    for (const double t : s.time_to_loaded_seconds) rates.push_back(gib_per_s(t));
    const bool device = c.memory_space == MemorySpaceKind::cuda;
    const double loaded = s.time_to_loaded_seconds.empty() ? 0 : median(s.time_to_loaded_seconds);
    j["load"] = {
        {"method", s.method},
        {"threads", s.threads},
        {"direct", s.direct},
        {"chunk_bytes", s.chunk_bytes},
        {"pool_bytes", s.pool_bytes},
        {"pool_chunks", s.pool_chunks},
        {"memory", s.memory},
        {"tp", s.tp},
        {"checkpoint_tp", s.checkpoint_tp},
        {"ranks", s.ranks},
        {"bytes", s.bytes},
        {"bytes_read", s.bytes_read},
        {"gap_bytes", s.gap_bytes},
        {"bridged_bytes", s.bridged_bytes},
        {"padding_bytes", s.padding_bytes},
        {"requests", s.requests},
        {"reads", s.reads},
        {"time_to_loaded_seconds",
         s.time_to_loaded_seconds.empty() ? nlohmann::json(nullptr) : nlohmann::json(loaded)},
        {"gib_per_s", s.time_to_loaded_seconds.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(gib_per_s(loaded))},
        {"h2d_seconds", device && !s.h2d_seconds.empty() ? nlohmann::json(median(s.h2d_seconds))
                                                         : nlohmann::json(nullptr)},
        {"samples",
         {{"time_to_loaded_seconds", s.time_to_loaded_seconds},
          {"gib_per_s", rates},
          {"h2d_seconds", device ? nlohmann::json(s.h2d_seconds) : nlohmann::json(nullptr)}}}};
  }
  j["environment"]["config_hash"] = j["config_hash"];
  j["environment"]["cache_policy"] = r.cache_policy_applied;
  j["environment"]["hosts"] = r.hosts;
  j["environment"]["processes_per_host"] = processes_per_host(r.hosts);
  nlohmann::json phases = nlohmann::json::object();
  nlohmann::json per_process = nlohmann::json::object();
  nlohmann::json per_rank = nlohmann::json::object();
  nlohmann::json iterations = nlohmann::json::object();
  nlohmann::json stragglers = nlohmann::json::object();
  if (r.write) {
    phases["write"] = phases_json(*r.write, true);
    if (!r.staging.empty()) phases["write"]["d2h"] = r.write->copy_seconds;
    per_process["write_seconds"] = spread_json(r.write->process_seconds);
    per_rank["write_seconds"] = spread_json(r.write->rank_seconds);
    iterations["write_seconds"] = r.write->iteration_seconds;
    iterations["mkdir_seconds"] = r.write->iteration_mkdir;
    iterations["manifest_seconds"] = r.write->iteration_manifest;
    iterations["metadata_seconds"] = r.write->iteration_metadata;
    iterations["gather_seconds"] = r.write->iteration_gather;
    if (!r.write->iteration_gather.empty()) {
      phases["write"]["gather_bytes"] = r.write->gather_bytes;
      phases["write"]["gather_local_bytes"] = r.write->gather_local_bytes;
    }
    iterations["retire_seconds"] = r.write->iteration_retire;
    stragglers["write"] = stragglers_json(*r.write, r.hosts);
  }
  if (r.read) {
    phases["read"] = phases_json(*r.read, false);
    if (!r.staging.empty()) phases["read"]["h2d"] = r.read->copy_seconds;
    per_process["read_seconds"] = spread_json(r.read->process_seconds);
    per_rank["read_seconds"] = spread_json(r.read->rank_seconds);
    iterations["read_seconds"] = r.read->iteration_seconds;
    stragglers["read"] = stragglers_json(*r.read, r.hosts);
  }
  if (r.config.io.request_latency) {
    nlohmann::json latency = nlohmann::json::object();
    if (r.write && r.write->latency) latency["write"] = latency_json(*r.write->latency);
    if (r.read && r.read->latency) latency["read"] = latency_json(*r.read->latency);
    j["latency"] = latency;
  }
  j["phases"] = phases;
  j["per_process"] = per_process;
  j["per_rank"] = per_rank;
  j["samples"] = iterations;
  j["stragglers"] = stragglers;
  return j;
}

}  // namespace ckpt::harness
