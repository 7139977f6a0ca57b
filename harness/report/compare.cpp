#include "harness/report/compare.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "harness/report/case_matching.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

DirectionComparison compare_direction(const char* name, const CaseRecord& base,
                                      const DirectionRecord& b, const CaseRecord& next,
                                      const DirectionRecord& n, double alpha) {
  DirectionComparison d;
  d.direction = name;
  const std::vector<double> bs = bandwidth_samples(base, b);
  const std::vector<double> ns = bandwidth_samples(next, n);
  d.base = sample_stats(bs);
  d.next = sample_stats(ns);
  d.ratio = d.base.median > 0 ? d.next.median / d.base.median : 0;
  d.test = mann_whitney_u(ns, bs);
  d.verdict = base.stores_data && next.stores_data ? decide(d.base, d.next, d.test, alpha)
                                                   : Verdict::too_few;
  return d;
}

std::string spread_cell(const SampleStats& s) {
  if (s.n == 0) return "-";
  const int decimals = significant_decimals(s.median);
  return fmt::format("{:.{}f} [{:.{}f}–{:.{}f}] n={}", s.median, decimals, s.min, decimals, s.max,
                     decimals, s.n);
}

// Every leaf of a configuration as "a.b.c" -> its JSON text (objects are nested a bounded depth:
// results are read as untrusted JSON).
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  for (const auto& [key, value] : j.items()) {
    const std::string name = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      flatten(value, name, out);
    } else {
      out[name] = value.dump();
    }
  }
}

// What is checkpointed: the model, its parallelism and state, the ranks emulated and the data.
// How it is written and read (backend, strategy, cache, engine, iterations) is what compare is
// for, so differences there are compared (marked `*`).
bool workload_key(const std::string& key) {
  for (const char* table : {"model.", "parallel.", "state.", "ranks.", "data."}) {
    if (key.starts_with(table)) return true;
  }
  return false;
}

// "model.name = "a" in BASE, "b" in NEW" for the first few workload keys whose values differ,
// and the bytes per checkpoint when they differ; "" when the workload is the same.
std::string workload_keys_differing(const CaseRecord& b, const CaseRecord& n) {
  std::map<std::string, std::string> base, next;
  flatten(b.config, "", base);
  flatten(n.config, "", next);
  std::set<std::string> keys;
  for (const auto& entry : base) keys.insert(entry.first);
  for (const auto& entry : next) keys.insert(entry.first);
  std::vector<std::string> out;
  if (b.bytes != n.bytes)
    out.push_back(fmt::format("bytes_per_checkpoint = {} in BASE, {} in NEW", b.bytes, n.bytes));
  constexpr std::size_t kShown = 3;
  std::size_t more = 0;
  for (const std::string& key : keys) {
    if (!workload_key(key)) continue;
    const auto x = base.find(key), y = next.find(key);
    const std::string was = x == base.end() ? "(none)" : x->second,
                      is = y == next.end() ? "(none)" : y->second;
    if (was == is) continue;
    if (out.size() < kShown)
      out.push_back(fmt::format("{} = {} in BASE, {} in NEW", key, was, is));
    else
      ++more;
  }
  if (out.empty()) return "";
  return fmt::format("{}{}", fmt::join(out, "; "),
                     more ? fmt::format(" (and {} more keys)", more) : "");
}

std::set<std::string> campaigns_of(const RunRecord& run) {
  std::set<std::string> names;
  for (const CaseRecord& c : run.cases) names.insert(c.campaign.empty() ? "(unnamed)" : c.campaign);
  return names;
}

}  // namespace

std::string workload_difference(const Comparison& c, const RunRecord& base, const RunRecord& next) {
  if (c.match == CaseMatch::workload) {
    for (const CaseComparison& cc : c.cases) {
      if (cc.same_workload) continue;
      return fmt::format("case {} has workload_hash {} in BASE and {} in NEW: another workload{}",
                         cc.label, cc.base_workload.empty() ? "(none)" : cc.base_workload,
                         cc.next_workload.empty() ? "(none)" : cc.next_workload,
                         cc.workload_difference.empty() ? "" : " (" + cc.workload_difference + ")");
    }
    return "";
  }
  const std::set<std::string> a = campaigns_of(base), b = campaigns_of(next);
  if (a != b) {
    return fmt::format(
        "BASE {} holds campaign {} and NEW {} campaign {}: different campaigns measure different "
        "workloads",
        base.name, fmt::join(a, ", "), next.name, fmt::join(b, ", "));
  }
  for (const CaseComparison& cc : c.cases) {
    if (cc.workload_difference.empty()) continue;
    return fmt::format("case {} checkpoints another workload in NEW than in BASE ({})", cc.label,
                       cc.workload_difference);
  }
  return "";
}

std::string verdict_text(Verdict v) {
  switch (v) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::no_change:
      return "no significant change";
    case Verdict::too_few:
      return "too few samples";
  }
  return "";
}

Verdict decide(const SampleStats& base, const SampleStats& next, const MannWhitney& test,
               double alpha) {
  if (too_few_samples(base.n, next.n, alpha)) return Verdict::too_few;
  if (test.p_value >= alpha || next.median == base.median) return Verdict::no_change;
  return next.median > base.median ? Verdict::faster : Verdict::slower;
}

bool Comparison::any_slower() const {
  return std::any_of(cases.begin(), cases.end(), [](const CaseComparison& c) {
    return std::any_of(c.directions.begin(), c.directions.end(),
                       [](const DirectionComparison& d) { return d.verdict == Verdict::slower; });
  });
}

Comparison compare_runs(const RunRecord& base, const RunRecord& next, double alpha,
                        CaseMatch match) {
  const auto by = [match](const CaseRecord& r) -> const std::string& {
    return match == CaseMatch::workload ? r.workload_hash : r.config_hash;
  };
  const std::vector<std::size_t> partner = match_cases_on(base.cases, next.cases, by, by);
  std::vector<bool> used(base.cases.size(), false);
  Comparison out;
  out.match = match;
  for (std::size_t i = 0; i < next.cases.size(); ++i) {
    const CaseRecord& n = next.cases[i];
    if (partner[i] == kNoPartner) {
      out.only_new.push_back(n.label());
      continue;
    }
    used[partner[i]] = true;
    const CaseRecord& b = base.cases[partner[i]];
    CaseComparison c;
    c.label = n.label();
    c.same_config = b.config_hash == n.config_hash;
    c.base_workload = b.workload_hash;
    c.next_workload = n.workload_hash;
    c.same_workload = !b.workload_hash.empty() && b.workload_hash == n.workload_hash;
    if (!c.same_config) c.workload_difference = workload_keys_differing(b, n);
    if (b.write.ran() || n.write.ran())
      c.directions.push_back(compare_direction("write", b, b.write, n, n.write, alpha));
    if (b.read.ran() || n.read.ran())
      c.directions.push_back(compare_direction("read", b, b.read, n, n.read, alpha));
    out.cases.push_back(std::move(c));
  }
  for (std::size_t j = 0; j < base.cases.size(); ++j) {
    if (!used[j]) out.only_base.push_back(base.cases[j].label());
  }
  return out;
}

void print_comparison(const Comparison& c, const RunRecord& base, const RunRecord& next,
                      double alpha, bool markdown, std::ostream& out) {
  fmt::print(out, "BASE {} ({})\nNEW  {} ({})\n\n", base.name, base.file.string(), next.name,
             next.file.string());
  Table table({"case", "phase", "BASE GiB/s", "NEW GiB/s", "NEW/BASE", "p", "verdict"},
              {false, false, true, true, true, true, false});
  for (const CaseComparison& cc : c.cases) {
    for (const DirectionComparison& d : cc.directions) {
      const std::string p = format_p_value(d.test.p_value);
      table.add({cc.label + (cc.same_config ? "" : " *"), d.direction, spread_cell(d.base),
                 spread_cell(d.next), d.ratio > 0 ? fmt::format("{:.3f}", d.ratio) : "-",
                 p + (d.test.exact ? "" : " ~"), verdict_text(d.verdict)});
    }
  }
  table.print(out, markdown);
  fmt::print(out,
             "\nGiB/s: median [min–max] over the timed iterations (bytes_per_checkpoint / "
             "iteration seconds); p: two-sided "
             "Mann–Whitney U over those samples (exact; ~ normal approximation), alpha {}.\n"
             "A verdict needs at least {} samples per side and sizes that can reach p < alpha "
             "(alpha 0.05: at least 4 per "
             "side; 3 vs 3 reaches only p = 0.1).\n",
             alpha, kMinSamples);
  if (c.match == CaseMatch::workload) {
    fmt::print(out,
               "cases matched by workload_hash (the bytes written), not config_hash: the target, "
               "backend, tuning and campaign may differ\n");
  }
  if (std::any_of(c.cases.begin(), c.cases.end(),
                  [](const CaseComparison& cc) { return !cc.same_config; })) {
    fmt::print(out, "*: {}the configurations differ (config_hash)\n",
               c.match == CaseMatch::config ? "matched by swept keys; " : "");
  }
  for (const std::string& label : c.only_base) fmt::print(out, "only in BASE: {}\n", label);
  for (const std::string& label : c.only_new) fmt::print(out, "only in NEW: {}\n", label);
}

}  // namespace ckpt::harness
