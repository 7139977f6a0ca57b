#include "harness/report/tier_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include "harness/common/text_format.hpp"
#include "harness/report/case_filter.hpp"
#include "harness/report/projection_formulas.hpp"
#include "harness/report/report_format.hpp"

namespace ckpt::harness {
namespace {

// Ranges that keep every figure finite: any real tier and step fits inside.
constexpr double kMaxTierSeconds = 1e9;  // 31 years
constexpr double kMinStepSeconds = 1e-3;
constexpr double kMaxStepSeconds = 1e6;
constexpr std::int64_t kMaxTrials = 100'000;
constexpr double kMaxJobDays = 36'525;          // a century
constexpr double kMostSimulatedFailures = 1e8;  // trials x failures a trial: seconds to run
constexpr std::size_t kMaxTraceFailures = 1'000'000;
constexpr std::size_t kCasesNamed = 8;  // in a "matches N cases" message

constexpr const char* kNumberKeys[] = {"stall", "durable", "restore"};

bool is_number_key(const std::string& key) {
  return std::find(std::begin(kNumberKeys), std::end(kNumberKeys), key) != std::end(kNumberKeys);
}

// A number of seconds from `flag`'s `key=text`: finite, 0 to kMaxTierSeconds.
double tier_seconds(const std::string& flag, const std::string& key, const std::string& text) {
  const std::optional<double> v = parse_number(text);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > kMaxTierSeconds) {
    throw std::runtime_error(fmt::format("{}: {}={} must be a number of seconds from 0 to {:g}",
                                         flag, key, text, kMaxTierSeconds));
  }
  return *v;
}

TierSource given_tier(const std::string& flag, const std::string& spec, const KeyValues& pairs) {
  TierSource t{spec, "given", "", {}, nullptr, 0};
  bool stall = false, durable = false, restore = false;
  for (const auto& [key, text] : pairs) {
    const double v = tier_seconds(flag, key, text);
    if (key == "stall") t.cost.stall = v, stall = true;
    if (key == "durable") t.cost.durable = v, durable = true;
    if (key == "restore") t.cost.restore = v, restore = true;
  }
  if (!stall || !restore) {
    throw std::runtime_error(fmt::format(
        "{} {}: give stall=S and restore=S (and durable=S when the copy is usable later than "
        "the stall ends), in seconds at full scale",
        flag, spec));
  }
  if (!durable) t.cost.durable = t.cost.stall;
  if (t.cost.durable < t.cost.stall) {
    throw std::runtime_error(fmt::format(
        "{} {}: durable={} is below stall={}: the time to durable counts from the checkpoint's "
        "start and includes the stall",
        flag, spec, t.cost.durable, t.cost.stall));
  }
  return t;
}

std::string case_name(const CaseRecord& c) {
  return c.run + ": " + c.label();
}

const CaseRecord& matching_case(const std::string& flag, const std::string& spec,
                                const KeyValues& pairs, const std::vector<RunRecord>& runs) {
  std::vector<const CaseRecord*> found;
  std::vector<std::string> all;
  for (const RunRecord& run : runs) {
    for (const CaseRecord& c : run.cases) {
      if (c.status != "ok" || !c.stores_data) continue;
      all.push_back(case_name(c));
      if (case_matches(c, pairs)) found.push_back(&c);
    }
  }
  if (found.size() == 1) return *found.front();
  std::vector<std::string> named;
  for (const CaseRecord* c : found) named.push_back(case_name(*c));
  const std::vector<std::string>& list = found.empty() ? all : named;
  const std::string shown = fmt::format(
      "{}{}", fmt::join(list.begin(), list.begin() + std::min(list.size(), kCasesNamed), "; "),
      list.size() > kCasesNamed ? "; ..." : "");
  if (found.empty()) {
    throw std::runtime_error(fmt::format(
        "{} {} matches no case of the runs (cases: {}); pick one by run=NAME and swept keys, or "
        "give stall=S,durable=S,restore=S",
        flag, spec, shown));
  }
  throw std::runtime_error(fmt::format(
      "{} {} matches {} cases ({}): add KEY=VALUE pairs (run=NAME, a swept key) until one is left",
      flag, spec, found.size(), shown));
}

void check_job_days(double days) {
  if (!std::isfinite(days) || days <= 0 || days > kMaxJobDays) {
    throw std::runtime_error(
        fmt::format("--job-days must be above 0 and at most {:g} (got {})", kMaxJobDays, days));
  }
}

double step_seconds(const TierOptions& o, const TierSource& near, const CaseRecord* near_case,
                    std::string& rule) {
  if (o.step_seconds) {
    rule = "--step-seconds";
    return *o.step_seconds;
  }
  const auto loop = near_case && near_case->training
                        ? near_case->number_of("training.iteration_seconds")
                        : std::nullopt;
  if (!loop) {
    throw std::runtime_error(fmt::format(
        "--near-tier {}: give --step-seconds S (one training step's time, the unit of k): the "
        "near tier {} has no training loop to take it from",
        near.spec, near_case ? "case" : "given as numbers"));
  }
  rule = "training.iteration_seconds of the near tier's case";
  return *loop;
}

void check_ranges(const TierOptions& o, double step) {
  if (!std::isfinite(step) || step < kMinStepSeconds || step > kMaxStepSeconds) {
    throw std::runtime_error(
        fmt::format("--step-seconds must be a number of seconds from {:g} to "
                    "{:g} (got {})",
                    kMinStepSeconds, kMaxStepSeconds, step));
  }
  if (!o.near_recoverable) {
    throw std::runtime_error(
        "two tiers need --near-recoverable P: the share of failures the near tier's copies "
        "survive (0 to 1; e.g. 0.9 when nine failures in ten take down no more than what the "
        "near tier replicates)");
  }
  const double p = *o.near_recoverable;
  if (!std::isfinite(p) || p < 0 || p > 1)
    throw std::runtime_error(fmt::format("--near-recoverable must be from 0 to 1 (got {})", p));
  if (o.trials < 1 || o.trials > kMaxTrials) {
    throw std::runtime_error(
        fmt::format("--mc-trials must be from 1 to {} (got {})", kMaxTrials, o.trials));
  }
  check_job_days(o.job_days);
}

}  // namespace

std::vector<double> read_failure_trace(const std::string& path, double job_days) {
  check_job_days(job_days);
  std::ifstream in(path);
  if (!in) throw std::runtime_error("--failure-trace " + path + ": cannot be read");
  std::vector<double> seconds;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    const std::string text = line.substr(0, line.find('#'));
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string value = text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
    const std::optional<double> hours = parse_number(value);
    if (!hours || !std::isfinite(*hours) || *hours < 0 || *hours >= job_days * 24) {
      throw std::runtime_error(fmt::format(
          "{}:{}: `{}` is not a failure time: one number of hours from 0 to below the job's "
          "end ({} h, --job-days {}) per line",
          path, n, value, job_days * 24, job_days));
    }
    if (seconds.size() == kMaxTraceFailures)
      throw std::runtime_error(fmt::format("{}: more than {} failures", path, kMaxTraceFailures));
    seconds.push_back(*hours * 3600);
  }
  if (seconds.empty())
    throw std::runtime_error("--failure-trace " + path + ": no failure times in it");
  std::sort(seconds.begin(), seconds.end());
  return seconds;
}

TierSource resolve_tier(const std::string& flag, const std::string& spec,
                        const std::vector<RunRecord>& runs, const ProjectionOptions& options,
                        bool near) {
  const KeyValues pairs = parse_key_values(spec, flag);
  const auto numbers = std::count_if(pairs.begin(), pairs.end(),
                                     [](const auto& p) { return is_number_key(p.first); });
  if (numbers == static_cast<std::ptrdiff_t>(pairs.size())) return given_tier(flag, spec, pairs);
  if (numbers > 0) {
    throw std::runtime_error(fmt::format(
        "{} {}: either KEY=VALUE pairs picking a case or stall=S,durable=S,restore=S, not both",
        flag, spec));
  }
  const CaseRecord& c = matching_case(flag, spec, pairs, runs);
  ProjectionOptions o = options;
  if (near) o.storage_gib_per_s.reset();  // node-local: its bandwidth grows with the nodes
  const CaseProjection p = project_case(c, o, true);
  return {spec,     case_name(c),
          p.engine, {p.checkpoint_seconds, p.durable_seconds, p.restore_seconds},
          &c,       p.gpus};
}

namespace {

double job_mtbf_hours(const ProjectionOptions& options, const TierSource& near,
                      const TierSource& far) {
  if (near.c && far.c && near.gpus != far.gpus) {
    throw std::runtime_error(fmt::format(
        "--near-tier {} and --far-tier {} project to different jobs ({} and {} GPUs): pass "
        "--nodes N so that both describe one job",
        near.spec, far.spec, near.gpus, far.gpus));
  }
  if (options.mtbf_hours) return *options.mtbf_hours;
  const std::int64_t gpus = near.c ? near.gpus : far.gpus;
  if (gpus == 0) {
    throw std::runtime_error(
        "--mtbf-preset scales with the job's GPUs, which tiers given as numbers do not tell: "
        "give --mtbf-hours H");
  }
  return preset_mtbf_hours(kLlama3Preset, gpus);
}

void check_simulation_size(const TierProjection& t) {
  const double failures = t.setup.trace.empty() ? t.setup.job_seconds / t.inputs.mtbf_seconds
                                                : static_cast<double>(t.setup.trace.size());
  const double total = failures * static_cast<double>(t.setup.trials);
  if (total > kMostSimulatedFailures) {
    throw std::runtime_error(fmt::format(
        "the Monte Carlo would play {:.3g} failures ({} trials x {:.3g} a trial), more than {:g}: "
        "lower --mc-trials or --job-days",
        total, t.setup.trials, failures, kMostSimulatedFailures));
  }
}

}  // namespace

TierProjection build_tier_projection(const std::vector<RunRecord>& runs,
                                     const ProjectionOptions& options,
                                     std::vector<double> trace_seconds) {
  const TierOptions& o = options.tiers;
  if (o.near.empty() || o.far.empty()) {
    throw std::runtime_error(fmt::format(
        "two-level intervals need both tiers, {} is missing: --near-tier and --far-tier, each "
        "KEY=VALUE pairs picking a case (e.g. run=NAME) or stall=S,durable=S,restore=S",
        o.near.empty() ? "--near-tier" : "--far-tier"));
  }
  TierProjection t;
  t.near = resolve_tier("--near-tier", o.near, runs, options, true);
  t.far = resolve_tier("--far-tier", o.far, runs, options, false);
  const double step = step_seconds(o, t.near, t.near.c, t.step_rule);
  check_ranges(o, step);
  t.inputs = {t.near.cost, t.far.cost, step, *o.near_recoverable,
              job_mtbf_hours(options, t.near, t.far) * 3600};
  t.setup = {o.trials, o.seed, o.job_days * 86400, std::move(trace_seconds)};
  check_simulation_size(t);
  t.failure_rule =
      t.setup.trace.empty()
          ? "failures with exponential gaps of mean M"
          : fmt::format("the {} failures of {}, shifted by a random offset a trial (wrapping)",
                        t.setup.trace.size(), o.failure_trace);
  t.best = best_tier_intervals(t.inputs);
  if (t.best.far_every == 0) {
    throw std::runtime_error(fmt::format(
        "no near interval up to 4 M ({}) lets the near tier's copy become durable before the "
        "next checkpoint (time to durable {}): check --near-tier {}",
        format_interval(4 * t.inputs.mtbf_seconds), format_interval(t.near.cost.durable),
        t.near.spec));
  }
  TierInputs far_alone = t.inputs;
  far_alone.near = far_alone.far;
  t.far_only = best_tier_intervals(far_alone, 1);
  t.simulated = monte_carlo_goodput(t.inputs, t.best.k, t.best.far_every, t.setup);
  if (t.far_only.far_every > 0)
    t.simulated_far_only = monte_carlo_goodput(far_alone, t.far_only.k, 1, t.setup);
  return t;
}

}  // namespace ckpt::harness
