#include "harness/report/verdict.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "harness/report/latency_table.hpp"
#include "harness/report/report_format.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {
namespace {

// A measured quantity of a row and how the sentence speaks of it.
struct Quantity {
  SampleStats ReportRow::*stats;
  std::vector<double> ReportRow::*samples;
  bool lower_is_better;
  const char* verb;    // "stalls the loop"
  const char* better;  // "less than", "faster than"
  const char* per;     // " per checkpoint", ""
  const char* alike;   // "as long as", "as fast as"
  std::string (*shown)(double, BandwidthUnit);
};

std::string seconds_shown(double s, BandwidthUnit = BandwidthUnit::gib) {
  return s > 0 ? format_latency(s) : "0 s";
}
// A bandwidth in GiB/s as `unit` writes it.
std::string rate_shown(double gib_per_s, BandwidthUnit unit) {
  return format_significant(gib_per_s * static_cast<double>(std::uint64_t{1} << 30) /
                            unit_bytes(unit)) +
         " " + unit_label(unit);
}

const Quantity kStall{&ReportRow::stall, &ReportRow::stall_samples, true,         "stalls the loop",
                      "less than",       " per checkpoint",         "as long as", seconds_shown};
const Quantity kDurable{&ReportRow::durable, &ReportRow::durable_samples, true, "", "", "", "",
                        seconds_shown};
const Quantity kWrite{
    &ReportRow::write, &ReportRow::write_samples, false, "writes", "faster than", "", "as fast as",
    rate_shown};
const Quantity kRead{
    &ReportRow::read, &ReportRow::read_samples, false, "reads", "faster than", "", "as fast as",
    rate_shown};

// The level below which the verdict calls a difference significant.
constexpr double kVerdictAlpha = 0.05;

// "" for the comparison of the cases themselves (no key to compare by).
constexpr const char* kCases = "";

// One key's best value against its worst on one quantity.
struct Comparison {
  std::string key;
  std::string best, worst;
  double best_value = 0, worst_value = 0;  // geometric means over the matched settings
  double ratio = 1;                        // >= 1: how much better best is than worst
  std::size_t settings = 0;                // settings of the other keys where every value ran
  std::string others;                      // those keys: "training.checkpoint_every, run"
  std::map<std::string, double> means;     // every value's geometric mean
  // Best against worst, setting by setting, by a two-sided Mann–Whitney U test of their samples:
  // how many settings had samples enough to test (too_few_samples, as `compare` decides) and how
  // many too few, in how many the difference was significant in the direction of the means, and
  // (one setting) its p-value and sample counts.
  std::size_t tested = 0, too_few = 0, significant = 0;
  double p_value = 1;
  std::size_t best_n = 0, worst_n = 0;
};

// Tests best against worst in every setting where both ran, into c's tested/significant counts.
void test_difference(
    Comparison& c, const Quantity& q,
    const std::map<std::string, std::map<std::string, const ReportRow*>>& rows_by_setting) {
  for (const auto& [setting, by_value] : rows_by_setting) {
    const auto best = by_value.find(c.best), worst = by_value.find(c.worst);
    if (best == by_value.end() || worst == by_value.end()) continue;
    const std::vector<double>& x = best->second->*q.samples;
    const std::vector<double>& y = worst->second->*q.samples;
    if (x.empty() || y.empty()) continue;
    c.best_n = x.size(), c.worst_n = y.size();
    if (too_few_samples(x.size(), y.size(), kVerdictAlpha)) {
      ++c.too_few;
      continue;
    }
    const MannWhitney test = mann_whitney_u(x, y);
    ++c.tested;
    // Best beats worst: lower for a time, higher for a bandwidth; U counts pairs with x > y.
    const double half = static_cast<double>(x.size() * y.size()) / 2;
    const bool same_way = q.lower_is_better ? test.u < half : test.u > half;
    if (test.p_value < kVerdictAlpha && same_way) ++c.significant;
    c.p_value = test.p_value;
  }
}

// The row's value of `key` (its full name for kCases, its run for "run").
std::optional<std::string> value_of(const ReportRow& r, const std::string& key) {
  if (key == kCases) return r.full_name;
  return r.c->value_of(key);
}

// What the row's other swept keys (and its run) are set to: rows alike in it differ in `key`.
std::string setting_of(const ReportRow& r, const std::string& key) {
  if (key == kCases) return "";
  nlohmann::json rest = r.c->swept;
  rest.erase(key);
  return (key == "run" ? "" : r.c->run + "\n") + rest.dump();
}

std::string other_keys(const std::vector<const ReportRow*>& rows, const std::string& key) {
  std::vector<std::string> keys;
  for (const ReportRow* r : rows) {
    for (const auto& [k, value] : r->c->swept.items()) {
      if (k != key && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    }
  }
  if (key != "run" && key != kCases &&
      std::any_of(rows.begin(), rows.end(),
                  [&](const ReportRow* r) { return r->c->run != rows.front()->c->run; })) {
    keys.push_back("run");
  }
  return fmt::format("{}", fmt::join(keys, ", "));
}

double geometric_mean(const std::vector<double>& values) {
  double logs = 0;
  for (double v : values) {
    if (!(v > 0)) return 0;
    logs += std::log(v);
  }
  return std::exp(logs / static_cast<double>(values.size()));
}

std::optional<Comparison> compare_by(const std::vector<const ReportRow*>& rows,
                                     const std::string& key, const Quantity& q) {
  std::vector<std::string> values;  // in the order the rows first show them
  std::map<std::string, std::map<std::string, double>> table;  // setting -> value -> median
  std::map<std::string, std::map<std::string, const ReportRow*>> rows_by_setting;
  for (const ReportRow* r : rows) {
    const SampleStats& s = r->*q.stats;
    const std::optional<std::string> v = value_of(*r, key);
    if (s.n == 0 || !v) continue;
    table[setting_of(*r, key)][*v] = s.median;
    rows_by_setting[setting_of(*r, key)][*v] = r;
    if (std::find(values.begin(), values.end(), *v) == values.end()) values.push_back(*v);
  }
  if (values.size() < 2) return std::nullopt;
  std::map<std::string, std::vector<double>> per_value;
  Comparison c{.key = key, .others = other_keys(rows, key)};
  for (const auto& [setting, figures] : table) {
    if (figures.size() != values.size()) continue;  // not every value ran here: nothing to match
    ++c.settings;
    for (const auto& [value, figure] : figures) per_value[value].push_back(figure);
  }
  if (c.settings == 0) return std::nullopt;
  const auto better = [&](double a, double b) { return q.lower_is_better ? a < b : a > b; };
  for (const std::string& v : values) {
    const double mean = c.means[v] = geometric_mean(per_value[v]);
    if (c.best.empty() || better(mean, c.best_value)) c.best = v, c.best_value = mean;
    // Ties: the first value is the best, the last the worst (so that two differ).
    if (c.worst.empty() || !better(mean, c.worst_value)) c.worst = v, c.worst_value = mean;
  }
  const double low = std::min(c.best_value, c.worst_value),
               high = std::max(c.best_value, c.worst_value);
  c.ratio = low > 0 ? high / low : std::numeric_limits<double>::infinity();
  for (auto it = rows_by_setting.begin(); it != rows_by_setting.end();) {
    it = it->second.size() == values.size() ? std::next(it) : rows_by_setting.erase(it);
  }
  test_difference(c, q, rows_by_setting);
  return c;
}

// Every comparison of `q` by a swept key (and by run), the largest ratio first; the cases
// themselves when no key matches any.
std::vector<Comparison> comparisons(const ReportModel& m, const std::vector<const ReportRow*>& rows,
                                    const Quantity& q) {
  std::vector<std::string> keys;
  for (const ReportRow* r : rows) {
    for (const auto& [key, value] : r->c->swept.items()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  if (m.runs.size() > 1) keys.push_back("run");
  std::vector<Comparison> out;
  for (const std::string& key : keys) {
    if (auto c = compare_by(rows, key, q)) out.push_back(std::move(*c));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Comparison& a, const Comparison& b) { return a.ratio > b.ratio; });
  if (out.empty()) {
    if (auto c = compare_by(rows, kCases, q)) out.push_back(std::move(*c));
  }
  return out;
}

std::string ratio_text(double ratio) {
  return std::isfinite(ratio) ? format_significant(ratio) + "× " : "far ";
}

// "lazy stalls the loop 210× less than sync (2.50 ms against 525 ms per checkpoint)", saying
// where the figures are geometric means over several settings of the other keys.
// "; p = 0.008 over 5 and 5 samples", "; not significant: p = 0.31 over 4 and 4 samples", or over
// several settings "; significant (p < 0.05) in 2 of 3 tested settings" (", too few samples in 1
// more"); where samples are too few to test (too_few_samples), "; too few samples to test: 2 and
// 2" or "; too few samples to test in any of 2 settings"; "" where no setting had samples.
std::string significance(const Comparison& c) {
  if (c.tested == 0 && c.too_few == 0) return "";
  if (c.tested == 0) {
    return c.too_few > 1 ? fmt::format("; too few samples to test in any of {} settings", c.too_few)
                         : fmt::format("; too few samples to test: {} and {}", c.best_n, c.worst_n);
  }
  if (c.settings > 1 || c.tested > 1) {
    return fmt::format("; significant (p < {}) in {} of {} tested settings{}", kVerdictAlpha,
                       c.significant, c.tested,
                       c.too_few > 0 ? fmt::format(", too few samples in {} more", c.too_few) : "");
  }
  return fmt::format("; {}p = {} over {} and {} samples",
                     c.significant ? "" : "not significant: ", format_p_value(c.p_value), c.best_n,
                     c.worst_n);
}

std::string claim(const Comparison& c, const Quantity& q, BandwidthUnit unit) {
  const std::string figures =
      fmt::format("{} against {}{}", q.shown(c.best_value, unit), q.shown(c.worst_value, unit),
                  q.per) +
      (c.settings > 1
           ? fmt::format("; geometric means over {} settings of {}", c.settings, c.others)
           : "") +
      significance(c);
  if (format_significant(c.ratio) == "1.00")
    return fmt::format("{} {} {} {} ({})", c.best, q.verb, q.alike, c.worst, figures);
  return fmt::format("{} {} {}{} {} ({})", c.best, q.verb, ratio_text(c.ratio), q.better, c.worst,
                     figures);
}

// "its checkpoint is durable 1.05× later (551 ms against 525 ms)": the same two values' time to
// durable.
std::string durable_clause(const std::vector<const ReportRow*>& rows, const Comparison& lead) {
  const std::optional<Comparison> d = compare_by(rows, lead.key, kDurable);
  if (!d || !d->means.count(lead.best) || !d->means.count(lead.worst)) return "";
  const double mine = d->means.at(lead.best), theirs = d->means.at(lead.worst);
  const std::string values =
      fmt::format("({} against {})", seconds_shown(mine), seconds_shown(theirs));
  const double ratio = std::min(mine, theirs) > 0 ? std::max(mine, theirs) / std::min(mine, theirs)
                                                  : std::numeric_limits<double>::infinity();
  if (format_significant(ratio) == "1.00") return "its checkpoint is durable as soon " + values;
  return fmt::format("its checkpoint is durable {}{} {}", ratio_text(ratio),
                     mine > theirs ? "later" : "sooner", values);
}

std::string companion(const std::vector<const ReportRow*>& rows, const Comparison& lead,
                      const Quantity& q, BandwidthUnit unit) {
  if (q.stats == &ReportRow::stall) return durable_clause(rows, lead);
  if (q.stats != &ReportRow::write) return "";
  const std::optional<Comparison> read = compare_by(rows, lead.key, kRead);
  return read ? claim(*read, kRead, unit) : "";
}

// The one case's figures, when there is nothing to compare.
std::string single(const ReportRow& r, BandwidthUnit unit) {
  const std::string name = r.full_name == "-" ? "The one case" : r.full_name;  // "-": nothing swept
  if (r.stall.n > 0) {
    return fmt::format("{} stalls the loop {} per checkpoint; its checkpoint is durable after {}.",
                       name, seconds_shown(r.stall.median), seconds_shown(r.durable.median));
  }
  std::string s = name;
  if (r.write.n > 0)
    s += " writes " + rate_shown(r.write.median, unit) + (r.read.n > 0 ? " and" : "");
  if (r.read.n > 0) s += " reads " + rate_shown(r.read.median, unit);
  return s + " (medians).";
}

std::string failures(const ReportModel& m) {
  const auto failed = std::count_if(m.rows.begin(), m.rows.end(),
                                    [](const ReportRow& r) { return r.c->status != "ok"; });
  if (failed == 0) return "";
  if (static_cast<std::size_t>(failed) == m.rows.size())
    return "Every case failed (see the status column).";
  return fmt::format("{} of {} cases failed (see the status column).", failed, m.rows.size());
}

std::string joined(std::string a, const std::string& b) {
  return a.empty() ? b : b.empty() ? a : a + " " + b;
}

}  // namespace

std::string verdict(const ReportModel& m, BandwidthUnit unit) {
  std::vector<const ReportRow*> rows;
  for (const ReportRow& r : m.rows) {
    if (r.c->status == "ok") rows.push_back(&r);
  }
  const auto any = [&](SampleStats ReportRow::*stats) {
    return std::any_of(rows.begin(), rows.end(),
                       [&](const ReportRow* r) { return (r->*stats).n > 0; });
  };
  const Quantity* lead = any(&ReportRow::stall)   ? &kStall
                         : any(&ReportRow::write) ? &kWrite
                         : any(&ReportRow::read)  ? &kRead
                                                  : nullptr;
  if (lead == nullptr) return failures(m);
  const std::vector<Comparison> found = comparisons(m, rows, *lead);
  if (found.empty()) {
    const auto it = std::find_if(rows.begin(), rows.end(),
                                 [&](const ReportRow* r) { return (r->*lead->stats).n > 0; });
    return joined(single(**it, unit), failures(m));
  }
  const Comparison& first = found.front();
  std::string s = (first.key == kCases ? "" : "By " + first.key + ": ") + claim(first, *lead, unit);
  const std::string more = companion(rows, first, *lead, unit);
  s += (more.empty() ? "" : "; " + more) + ".";
  if (found.size() > 1) s += fmt::format(" By {}: {}.", found[1].key, claim(found[1], *lead, unit));
  return joined(s, failures(m));
}

}  // namespace ckpt::harness
