#include "harness/report/tier_projection.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <sstream>

#include "harness/report/projection.hpp"
#include "harness/report/report_format.hpp"
#include "harness/report/report_table.hpp"

namespace ckpt::harness {
namespace {

std::string percent(double share) {
  return fmt::format("{:.2f}%", 100 * share);
}

// "24 (2 min)": k steps and the near interval k s.
std::string steps_cell(std::int64_t k, double step_seconds) {
  return fmt::format("{} ({})", k, format_interval(static_cast<double>(k) * step_seconds));
}

std::vector<std::string> scheme_row(const std::string& name, const TierBest& b,
                                    const MonteCarloGoodput& mc, double step_seconds) {
  if (b.far_every == 0) return {name, "-", "-", "-", "-", "-", "-", "-"};
  const double far = static_cast<double>(b.k * b.far_every) * step_seconds;
  return {
      name,
      steps_cell(b.k, step_seconds),
      fmt::format("{}{} ({})", b.far_every, b.far_every_at_cap ? "+" : "", format_interval(far)),
      percent(b.point.goodput),
      percent(mc.mean),
      percent(mc.p5),
      percent(mc.p50),
      percent(mc.p95)};
}

void print_rules(const TierProjection& t, std::ostream& out) {
  const TierInputs& in = t.inputs;
  fmt::print(out, "s (one step) = {} ({}); p (failures the near tier survives) = {}; M = {}\n",
             format_interval(in.step_seconds), t.step_rule, format_significant(in.near_recoverable),
             format_interval(in.mtbf_seconds));
  fmt::print(out,
             "near interval τ = k·s, far interval K·k·s; a checkpoint stalls C1, every K-th "
             "(also to the far tier) C3; a copy is usable its time to durable D after its "
             "start, and k·s ≥ D1, K·k·s ≥ D3\n");
  fmt::print(out,
             "goodput = (1 − F/M) / (1 + O): O = ((K−1)·C1 + C3)/(K·τ); F = p·(E_near + R1) + "
             "(1 − p)·(E_far + R3), E = the work lost per failure (half a period, one more "
             "when the newest copy is not yet durable); waste = 1 − goodput\n");
  const double k_star = first_order_far_every(in);
  const std::string tau_star = std::isfinite(k_star) && k_star >= 1
                                   ? format_interval(first_order_near_interval(in, k_star))
                                   : "-";
  fmt::print(out,
             "first order: K* = √(p·(C3 − C1)/((1 − p)·C1)) = {}, τ*(K) = √(2M·(C1 + (C3 − "
             "C1)/K)/(p + (1 − p)·K)) = {} at K*; best (k, K): searched over K = 1..{} and "
             "every feasible k\n",
             std::isfinite(k_star) ? format_significant(k_star) : "∞", tau_star, kMaxFarEvery);
  if (t.best.far_every_at_cap)
    fmt::print(out, "+ = the search's largest K: the far tier is hardly ever needed\n");
  fmt::print(out,
             "simulated: {} trials of {} each, seed {}, {}; goodput mean and nearest-rank "
             "percentiles; {:.1f} failures a trial, {:.1f} of them restored from the near tier\n",
             t.setup.trials, format_interval(t.setup.job_seconds), t.setup.seed, t.failure_rule,
             t.simulated.failures, t.simulated.near_recoveries);
  fmt::print(out,
             "far tier only: every checkpoint goes to the far tier (stall C3) and every "
             "recovery reads it (R3)\n");
}

}  // namespace

TierTables tier_tables(const TierProjection& t) {
  TierTables tables;
  tables.tiers = {"tier", "case", "engine", "stall C", "durable D", "restore R"};
  for (const auto& [name, tier] : {std::pair{"near", &t.near}, std::pair{"far", &t.far}}) {
    tables.tier_rows.push_back({name, tier->name, tier->engine.empty() ? "-" : tier->engine,
                                format_interval(tier->cost.stall),
                                format_interval(tier->cost.durable),
                                format_interval(tier->cost.restore)});
  }
  tables.schemes = {"scheme",           "k (near interval)",
                    "K (far interval)", "goodput",
                    "simulated mean",   "p5",
                    "median",           "p95"};
  const double s = t.inputs.step_seconds;
  tables.scheme_rows = {scheme_row("two-level", t.best, t.simulated, s),
                        scheme_row("far tier only", t.far_only, t.simulated_far_only, s)};
  const TierBest& b = t.best;
  tables.headline = fmt::format(
      "best: k = {}, K = {}{} (near tier every {}, far tier every {}): goodput {}, simulated {} "
      "(p5–p95 {} to {})",
      b.k, b.far_every, b.far_every_at_cap ? "+" : "",
      format_interval(static_cast<double>(b.k) * s),
      format_interval(static_cast<double>(b.k * b.far_every) * s), percent(b.point.goodput),
      percent(t.simulated.mean), percent(t.simulated.p5), percent(t.simulated.p95));
  std::ostringstream rules;
  print_rules(t, rules);
  tables.rules = rules.str();
  return tables;
}

void print_tier_projection(const TierProjection& t, bool markdown, std::ostream& out) {
  const TierTables tables = tier_tables(t);
  out << (markdown ? "\n### Two-level checkpoint intervals\n\n"
                   : "\nTwo-level checkpoint intervals\n\n");
  Table tiers(tables.tiers, {false, false, false, true, true, true});
  for (const auto& row : tables.tier_rows) tiers.add(row);
  tiers.print(out, markdown);
  fmt::print(out, "\n{}\n\n", tables.headline);
  Table schemes(tables.schemes, {false, true, true, true, true, true, true, true});
  for (const auto& row : tables.scheme_rows) schemes.add(row);
  schemes.print(out, markdown);
  out << "\n" << tables.rules;
}

}  // namespace ckpt::harness
