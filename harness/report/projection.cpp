#include "harness/report/projection.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "harness/common/elapsed.hpp"
#include "harness/common/text_format.hpp"
#include "harness/report/projection_formulas.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"
#include "harness/report/tier_build.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

// The ranges the projection's inputs may take: wide enough for any real job and storage
// system, narrow enough that every figure stays finite and readable.
constexpr std::int64_t kMaxNodes = 1'000'000;
constexpr double kMaxGpusPerNode = 1024;
constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 30;
constexpr double kMinMtbfHours = 0.01;       // 36 s
constexpr double kMaxMtbfHours = 1'000'000;  // 114 years
constexpr double kMinStorageGibPerS = 1e-6;
constexpr double kMaxStorageGibPerS = 1e9;
constexpr std::uint64_t kMaxFullScaleBytes = std::uint64_t{1} << 60;

double ranged_option(const std::optional<double>& value, const char* flag, const char* unit,
                     double min, double max) {
  if (!value) return 0;
  if (!std::isfinite(*value) || *value < min || *value > max) {
    throw std::runtime_error(fmt::format("{} must be a number of {} from {} to {} (got {})", flag,
                                         unit, min, max, *value));
  }
  return *value;
}

void check_options(const ProjectionOptions& o) {
  ranged_option(o.storage_gib_per_s, "--storage-gib-per-s", "GiB/s", kMinStorageGibPerS,
                kMaxStorageGibPerS);
  ranged_option(o.mtbf_hours, "--mtbf-hours", "hours", kMinMtbfHours, kMaxMtbfHours);
  if (o.nodes && (*o.nodes < 1 || *o.nodes > kMaxNodes)) {
    throw std::runtime_error(
        fmt::format("--nodes must be from 1 to {} (got {})", group_digits(kMaxNodes), *o.nodes));
  }
  const int rates = (o.mtbf_hours ? 1 : 0) + (o.mtbf_preset.empty() ? 0 : 1) +
                    (o.tiers.failure_trace.empty() ? 0 : 1);
  if (rates > 1) {
    throw std::runtime_error(
        "give the failure rate once: --mtbf-hours, --mtbf-preset or --failure-trace, not two");
  }
  if (rates == 0) {
    throw std::runtime_error(
        fmt::format("project needs the job's mean time between failures: --mtbf-hours H, or "
                    "--mtbf-preset {} (Llama 3's 16,384-GPU job, scaled to this job's GPUs)",
                    kLlama3Preset.name));
  }
  if (!o.mtbf_preset.empty() && o.mtbf_preset != kLlama3Preset.name) {
    throw std::runtime_error(
        fmt::format("unknown --mtbf-preset `{}` (presets: {})", o.mtbf_preset, kLlama3Preset.name));
  }
}

double median_of(const std::vector<double>& v) {
  return v.empty() ? 0 : sample_stats(v).median;
}

std::int64_t distinct_hosts(const CaseRecord& c) {
  const auto it = c.environment.find("hosts");
  if (it == c.environment.end() || !it->is_array() || it->empty()) return 1;
  std::set<std::string> hosts;
  for (const auto& h : *it) hosts.insert(h.is_string() ? h.get<std::string>() : h.dump());
  return static_cast<std::int64_t>(hosts.size());
}

[[noreturn]] void missing(const CaseRecord& c, const std::string& what, const std::string& fix) {
  throw std::runtime_error(fmt::format("{}:{}: case {} has no {}: {}", c.file.string(), c.line,
                                       c.case_index, what, fix));
}

// Nodes and GPUs of the projected job.
void size_job(const CaseRecord& c, const ProjectionOptions& o, CaseProjection& p) {
  if (!c.world_size) missing(c, "`world_size`", "is this a ckptbench results.jsonl?");
  if (*c.world_size < 1 || *c.world_size > kMaxWorldSize) {
    throw std::runtime_error(
        fmt::format("{}:{}: `world_size`: must be from 1 to {}, found {} — is this a ckptbench "
                    "results.jsonl?",
                    c.file.string(), c.line, group_digits(kMaxWorldSize), *c.world_size));
  }
  std::optional<double> per_node = c.number_of("ranks.gpus_per_node");
  if (per_node &&
      !(*per_node >= 1 && *per_node <= kMaxGpusPerNode && *per_node == std::floor(*per_node))) {
    if (!o.nodes) {
      throw std::runtime_error(
          fmt::format("{}:{}: `config.ranks.gpus_per_node`: must be a whole number from 1 to {}, "
                      "found {} — pass --nodes N",
                      c.file.string(), c.line, kMaxGpusPerNode, *per_node));
    }
    per_node.reset();
  }
  if (!o.nodes && !per_node) missing(c, "`config.ranks.gpus_per_node`", "pass --nodes N");
  const auto gpus_per_node = per_node ? static_cast<std::int64_t>(*per_node) : 0;
  p.nodes = o.nodes ? *o.nodes : (*c.world_size + gpus_per_node - 1) / gpus_per_node;
  p.gpus = o.nodes && gpus_per_node > 0 ? *o.nodes * gpus_per_node : *c.world_size;
}

// C, time to durable and R at full scale: measured times × node_scale, at least what the
// storage's aggregate bandwidth allows (`floor`); an async stall is a copy in node memory.
void project_times(const CaseRecord& c, double floor, CaseProjection& p) {
  const auto capped = [&](double measured, bool& was_capped) {
    was_capped = floor > measured * p.node_scale;
    return std::max(measured * p.node_scale, floor);
  };
  const double node_bytes = static_cast<double>(c.bytes) / static_cast<double>(p.measured_nodes);
  const bool background = p.engine == "async" || p.engine == "lazy" || p.engine == "tiered";
  if (background) {
    if (!c.stall_seconds || !c.time_to_durable_seconds) {
      missing(c, "`training.stall_seconds` and `training.time_to_durable_seconds`",
              "run the case with its [training] loop");
    }
    p.checkpoint_seconds = *c.stall_seconds * p.node_scale;
    bool ignored = false;
    p.durable_seconds = capped(*c.time_to_durable_seconds, ignored);
  } else {
    const double measured =
        c.write.ran() ? median_of(c.write.seconds) : c.stall_seconds.value_or(0);
    if (!(measured > 0)) {
      missing(c, "checkpoint time (`samples.write_seconds`, or `training.stall_seconds`)",
              "run it with campaign.phase = \"both\" (a checkpoint and a restore)");
    }
    p.node_write_gib_s = node_bytes / measured / kGiB;
    p.checkpoint_seconds = capped(measured, p.write_capped);
    p.durable_seconds = p.checkpoint_seconds;
  }
  const double restore = median_of(c.read.seconds);
  if (!(restore > 0))
    missing(c, "restore time (`samples.read_seconds`)", "run it with campaign.phase = \"both\"");
  p.node_read_gib_s = node_bytes / restore / kGiB;
  p.restore_seconds = capped(restore, p.read_capped);
}

// A projection whose figures are not finite and positive (a stall of 0 s, bytes and times whose
// ratio overflows) has nothing to tell; say which input made it so.
void check_figures(const CaseRecord& c, const CaseProjection& p) {
  const std::pair<const char*, double> figures[] = {
      {"node_scale", p.node_scale}, {"C", p.checkpoint_seconds},      {"R", p.restore_seconds},
      {"τ Daly", p.daly_seconds},   {"interval", p.interval_seconds}, {"waste", p.waste}};
  for (const auto& [name, value] : figures) {
    if (std::isfinite(value) && value > 0) continue;
    throw std::runtime_error(
        fmt::format("{}:{}: case {}: the projection's {} is {} — its bytes_per_checkpoint ({}), "
                    "full_scale_bytes_per_checkpoint ({}) "
                    "and times (samples, training.stall_seconds) cannot describe a real checkpoint",
                    c.file.string(), c.line, c.case_index, name, value, c.bytes, p.full_bytes));
  }
}

}  // namespace

CaseProjection project_case(const CaseRecord& c, const ProjectionOptions& o, bool several_runs) {
  CaseProjection p;
  p.c = &c;
  p.name = (several_runs ? c.run + ": " : "") + c.label();
  p.engine = c.engine.empty() ? "sync" : c.engine;
  if (!c.full_scale_bytes) {
    missing(c, "`full_scale_bytes_per_checkpoint`",
            "results of a ckptbench from before `project`; run the campaign again");
  }
  if (c.bytes == 0)
    missing(c, "bytes (bytes_per_checkpoint is 0)", "project a case that writes something");
  if (*c.full_scale_bytes > kMaxFullScaleBytes) {
    throw std::runtime_error(fmt::format(
        "{}:{}: `full_scale_bytes_per_checkpoint`: must be at most {} (1 EiB), found {} "
        "— is this a ckptbench results.jsonl?",
        c.file.string(), c.line, kMaxFullScaleBytes, *c.full_scale_bytes));
  }
  p.full_bytes = *c.full_scale_bytes;
  size_job(c, o, p);
  p.measured_nodes = distinct_hosts(c);
  p.node_scale = (static_cast<double>(p.full_bytes) / static_cast<double>(p.nodes)) /
                 (static_cast<double>(c.bytes) / static_cast<double>(p.measured_nodes));
  const double floor =
      o.storage_gib_per_s ? static_cast<double>(p.full_bytes) / (*o.storage_gib_per_s * kGiB) : 0;
  project_times(c, floor, p);
  const double hours = o.mtbf_hours ? *o.mtbf_hours : preset_mtbf_hours(kLlama3Preset, p.gpus);
  p.mtbf_seconds = hours * 3600;
  p.young_seconds = young_interval(p.checkpoint_seconds, p.mtbf_seconds);
  p.daly_seconds = daly_interval(p.checkpoint_seconds, p.mtbf_seconds);
  // A background flush must end before the next checkpoint starts; a sync one is durable when the
  // stall ends.
  const bool background = p.engine == "async" || p.engine == "lazy" || p.engine == "tiered";
  p.interval_seconds = background ? std::max(p.daly_seconds, p.durable_seconds) : p.daly_seconds;
  p.waste =
      expected_waste(p.interval_seconds, p.checkpoint_seconds, p.restore_seconds, p.mtbf_seconds);
  check_figures(c, p);
  return p;
}

namespace {

std::string mtbf_rule(const ProjectionOptions& o, std::size_t trace_failures) {
  if (trace_failures > 0) {
    return fmt::format("M = {} days × 24 h / {} failures in {} = {} h (--failure-trace)",
                       format_significant(o.tiers.job_days), trace_failures, o.tiers.failure_trace,
                       format_significant(*o.mtbf_hours));
  }
  if (o.mtbf_hours)
    return fmt::format("M = {} h for the whole job (--mtbf-hours)",
                       format_significant(*o.mtbf_hours));
  const MtbfPreset& p = kLlama3Preset;
  return fmt::format(
      "M from {}: {} unexpected interruptions in {} days on {} GPUs = {} h, scaled by {} / the "
      "job's GPUs "
      "(failures grow with the GPU count)",
      p.name, p.interruptions, p.days, group_digits(p.gpus),
      fmt::format("{:.3f}", preset_mtbf_hours(p, p.gpus)), group_digits(p.gpus));
}

}  // namespace

std::string format_interval(double seconds) {
  constexpr double kDay = 86400, kYear = 365.25 * kDay;
  if (seconds < 120) return format_significant(seconds) + " s";
  if (seconds < 7200) return format_significant(seconds / 60) + " min";
  if (seconds < 2 * kDay) return format_significant(seconds / 3600) + " h";
  if (seconds < 2 * kYear) return format_significant(seconds / kDay) + " days";
  if (seconds < 1e6 * kYear) return format_significant(seconds / kYear) + " years";
  return fmt::format("{:.3g} years", seconds / kYear);
}

std::string format_waste(double waste) {
  constexpr double kMostShown = 10;  // 1000 %: training makes no progress long before
  return waste < kMostShown ? fmt::format("{:.2f}%", 100 * waste) : "> 1000%";
}

ProjectionModel build_projection(std::vector<RunRecord> runs, const ProjectionOptions& options) {
  check_options(options);
  ProjectionModel m;
  m.runs = std::move(runs);
  m.options = options;
  std::vector<double> trace;
  if (!options.tiers.failure_trace.empty()) {
    trace = read_failure_trace(options.tiers.failure_trace, options.tiers.job_days);
    m.options.mtbf_hours = options.tiers.job_days * 24 / static_cast<double>(trace.size());
  }
  ranged_option(m.options.mtbf_hours, "the MTBF of --failure-trace", "hours", kMinMtbfHours,
                kMaxMtbfHours);
  m.mtbf_rule = mtbf_rule(m.options, trace.size());
  for (const RunRecord& run : m.runs) {
    for (const CaseRecord& c : run.cases) {
      if (c.status != "ok" || !c.stores_data) continue;
      m.cases.push_back(project_case(c, m.options, m.runs.size() > 1));
    }
  }
  if (m.cases.empty() && !m.runs.empty()) {
    throw std::runtime_error(
        m.runs.front().file.string() +
        ": no case to project (each failed, or its backend stores nothing, like null)");
  }
  if (options.tiers.requested()) m.tiers = build_tier_projection(m.runs, m.options, trace);
  return m;
}

void print_projection(const ProjectionModel& m, bool markdown, std::ostream& out) {
  Table table(
      {"case", "engine", "full-scale", "GPUs", "nodes", "node write GiB/s", "C", "durable", "R",
       "MTBF", "τ Young", "τ Daly", "interval", "waste"},
      {false, false, true, true, true, true, true, true, true, true, true, true, true, true});
  bool any_capped = false;
  for (const CaseProjection& p : m.cases) {
    any_capped = any_capped || p.write_capped || p.read_capped;
    table.add({p.name, p.engine, format_bytes(static_cast<std::int64_t>(p.full_bytes)),
               group_digits(p.gpus), group_digits(p.nodes),
               p.node_write_gib_s > 0 ? format_significant(p.node_write_gib_s) : "-",
               format_interval(p.checkpoint_seconds) + (p.write_capped ? "*" : ""),
               format_interval(p.durable_seconds),
               format_interval(p.restore_seconds) + (p.read_capped ? "*" : ""),
               format_interval(p.mtbf_seconds), format_interval(p.young_seconds),
               format_interval(p.daly_seconds), format_interval(p.interval_seconds),
               format_waste(p.waste)});
  }
  table.print(out, markdown);
  const std::string storage = m.options.storage_gib_per_s
                                  ? format_significant(*m.options.storage_gib_per_s) +
                                        " GiB/s aggregate (--storage-gib-per-s)"
                                  : "uncapped (no --storage-gib-per-s)";
  fmt::print(
      out,
      "\nfull-scale: full_scale_bytes_per_checkpoint, every rank of the job at model.scale = 1\n");
  fmt::print(
      out,
      "nodes: {}; per-node bandwidth = the run's bytes / its median time / the hosts it ran on\n",
      m.options.nodes ? "--nodes" : "world_size / ranks.gpus_per_node, rounded up");
  fmt::print(out,
             "C (checkpoint stall), R (restore): the measured median × full-scale bytes per node / "
             "measured bytes per node, "
             "at least full-scale bytes / storage bandwidth: {}{}\n",
             storage, any_capped ? "; * = bound by the storage" : "");
  fmt::print(out,
             "async/lazy engines: C = the measured stall × the same factor (a copy in node "
             "memory); the interval is at "
             "least the time to durable\n");
  fmt::print(out, "{}\n", m.mtbf_rule);
  fmt::print(
      out,
      "τ Young = √(2CM); τ Daly = √(2CM)·[1 + ⅓√(C/2M) + (C/2M)/9] − C (C < 2M, else M); interval "
      "= max(τ Daly, "
      "durable) for async/lazy, τ Daly for sync; waste = C/τ + (τ/2 + R)/M at that interval\n");
}

}  // namespace ckpt::harness
