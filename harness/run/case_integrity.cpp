#include "harness/run/case_integrity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/exec/durability_probe.hpp"
#include "harness/results/dlio_summary.hpp"
#include "harness/results/environment.hpp"
#include "harness/results/workload_hash.hpp"

namespace ckpt::harness {
namespace {

// Where the write invocation of an [mlperf] case leaves its end, in its case directory.
constexpr const char* kWriteEndFile = "mlperf-write-end.json";

nlohmann::json preload_json(const PreloadCheck& p) {
  nlohmann::json interposed = nlohmann::json::array();
  for (const Interposer& i : p.interposed)
    interposed.push_back(nlohmann::json::array({i.symbol, i.library}));
  return {{"p", p.ld_preload}, {"s", p.ld_so_preload}, {"i", interposed}, {"k", p.known_shims}};
}

template <typename T>
void add_once(std::vector<T>& to, const T& item) {
  if (std::find(to.begin(), to.end(), item) == to.end()) to.push_back(item);
}

std::string sync_text(backends::SyncPolicy sync) {
  switch (sync) {
    case backends::SyncPolicy::fsync:
      return ", then its fsync of each file returned";
    case backends::SyncPolicy::fdatasync:
      return ", then its fdatasync of each file returned";
    case backends::SyncPolicy::none:
      break;
  }
  return " with no sync (backend.sync = \"none\": the bytes may still be in the page cache)";
}

// The event that ends the timed write of one checkpoint.
std::string write_done(const Case& c, bool objects) {
  const std::string transfer =
      objects ? "the store acknowledged every object of every process (a PUT, or the completion "
                "of a multipart upload)"
              : fmt::format("every process's last write call returned{}{} and the file was closed",
                            c.io.direct ? " (O_DIRECT: no page cache)" : "", sync_text(c.io.sync));
  if (!c.training.enabled())
    return transfer + "; the clock stops at the latest process's end, before the manifest commit";
  if (c.engine.kind == EngineKind::sync)
    return "the loop waits for the checkpoint: its stall ends when " + transfer +
           " and the manifest was committed";
  return "the loop's stall ends when the state is copied into host memory; time to durable ends "
         "when, on the flush thread, " +
         transfer + " and the manifest was committed";
}

// The event that ends the timed read.
std::string read_done(const Case& c, PhaseSelection phase, bool objects) {
  if (phase == PhaseSelection::load)
    return "the last byte of every inference rank's weights is in its buffer (device copies "
           "included); verification follows, untimed";
  return fmt::format(
      "every process's last {} returned into its buffer{}; the clock stops at the "
      "latest process's end, before verification",
      objects ? "ranged GET" : "read call",
      c.io.direct && !objects ? " (O_DIRECT: no page cache)" : "");
}

}  // namespace

void record_preload(CaseState& s) {
  Comm& comm = s.context.comm;
  PreloadCheck& merged = s.record.result.integrity.preload;
  for (const std::string& text : comm.gather(preload_json(check_preload()).dump())) {
    const nlohmann::json p = nlohmann::json::parse(text);
    if (merged.ld_preload.empty()) merged.ld_preload = p.at("p").get<std::string>();
    if (merged.ld_so_preload.empty()) merged.ld_so_preload = p.at("s").get<std::string>();
    for (const nlohmann::json& i : p.at("i"))
      add_once(merged.interposed,
               Interposer{i.at(0).get<std::string>(), i.at(1).get<std::string>()});
    for (const nlohmann::json& k : p.at("k")) add_once(merged.known_shims, k.get<std::string>());
  }
}

void probe_target(CaseState& s, const backends::Backend* backend) {
  const Case& c = s.context.c;
  DurabilityProbe& probe = s.record.result.integrity.durability;
  if (s.context.comm.rank() != 0) return;
  if (s.context.phase == PhaseSelection::load) {
    probe.why_not = "the load phase writes nothing";
  } else if (stores_objects(c)) {
    probe.why_not = "an object store: no file system to probe";
  } else if (c.io.sync == backends::SyncPolicy::none) {
    probe.why_not = "backend.sync = \"none\": the case makes no claim of durability";
  } else if (backend != nullptr && !backend->capabilities().stores_data) {
    probe.why_not = "the backend stores nothing";
  } else {
    auto& probes = s.context.run.durability_probes;
    const std::string target = c.target.string();
    if (!probes.contains(target)) probes[target] = probe_durability(c.target);
    probe = probes[target];
  }
}

void record_integrity_facts(CaseState& s) {
  CaseResult& r = s.record.result;
  IntegrityRecord& integrity = r.integrity;
  const std::set<std::string> hosts(r.hosts.begin(), r.hosts.end());
  integrity.bytes_per_host = r.bytes_per_checkpoint / std::max<std::size_t>(hosts.size(), 1);
  integrity.host_memory_bytes = host_memory_bytes();
  const auto on_first_host =
      std::count(r.hosts.begin(), r.hosts.end(), r.hosts.empty() ? std::string() : r.hosts.front());
  const double cores = r.environment.value("cores", 0.0);
  integrity.cores_per_process = on_first_host > 0 ? cores / static_cast<double>(on_first_host) : 0;
  const Case& c = s.context.c;
  const bool objects = stores_objects(c);
  if (r.write || (r.training && s.context.phase != PhaseSelection::restore))
    integrity.done_write = write_done(c, objects);  // a tiered restart trains nothing
  if (r.read) integrity.done_read = read_done(c, s.context.phase, objects);
}

void record_write_end(CaseState& s) {
  const Case& c = s.context.c;
  CaseResult& r = s.record.result;
  if (!c.mlperf || s.context.phase != PhaseSelection::checkpoint || !s.record.ok()) return;
  std::string problem;
  if (s.context.comm.rank() == 0) {
    const double end_seconds = std::chrono::duration<double>(r.ended_at.time_since_epoch()).count();
    const nlohmann::json marker{{"end_utc", dlio_time(r.ended_at)},
                                {"end_unix_seconds", end_seconds},
                                {"workload_hash", workload_hash(c)}};
    try {
      s.store.store().write_text(case_directory(c) / kWriteEndFile, marker.dump());
    } catch (const std::exception& e) {
      problem = e.what();
    }
  }
  // Without it the read invocation is marked non-compliant: the write itself stands.
  problem = s.context.comm.broadcast(problem);
  if (!problem.empty())
    s.record.add_notes(
        {"the end of this write invocation was not recorded for the read "
         "invocation: " +
         problem});
}

void check_read_gap(CaseState& s) {
  const Case& c = s.context.c;
  CaseResult& r = s.record.result;
  if (!c.mlperf || !r.mlperf || s.context.phase != PhaseSelection::restore) return;
  std::string text;
  if (s.context.comm.rank() == 0) {
    try {
      text = s.store.store().read_text(case_directory(c) / kWriteEndFile).value_or("");
    } catch (const std::exception&) {
      text.clear();  // unreadable: the gap is unknown, and the verdict says so
    }
  }
  text = s.context.comm.broadcast(text);
  std::optional<double> gap;
  std::string ended;
  const nlohmann::json marker = nlohmann::json::parse(text, nullptr, false);
  if (marker.is_object() && marker.contains("end_unix_seconds") &&
      marker["end_unix_seconds"].is_number() && marker.contains("end_utc") &&
      marker["end_utc"].is_string()) {
    const double start = std::chrono::duration<double>(r.started_at.time_since_epoch()).count();
    gap = start - marker["end_unix_seconds"].get<double>();
    ended = marker["end_utc"].get<std::string>();
  }
  check_invocation_gap(*r.mlperf, gap, ended);
}

}  // namespace ckpt::harness
