#pragma once

// The projection's two-level part: the near and far tiers' full-scale costs (from projected
// cases or given as numbers), the best (k, K) by the analytic model, its goodput by a Monte
// Carlo over failure times, and the far tier alone for comparison (build_tier_projection).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/run_input.hpp"
#include "harness/report/tier_model.hpp"
#include "harness/report/tier_monte_carlo.hpp"

namespace ckpt::harness {

// One tier as the user named it.
struct TierSource {
  std::string spec;    // the option's text
  std::string name;    // "run: label" of the case, or "given"
  std::string engine;  // the case's engine ("" given as numbers)
  TierCost cost;
  const CaseRecord* c = nullptr;  // the case (null given as numbers)
  std::int64_t gpus = 0;          // the job the case projects to (0 given as numbers)
};

struct TierProjection {
  TierSource near, far;
  TierInputs inputs;
  std::string step_rule;     // where s came from, one phrase
  std::string failure_rule;  // how the Monte Carlo draws failures, one phrase
  MonteCarloSetup setup;
  TierBest best;      // both tiers
  TierBest far_only;  // every checkpoint to the far tier, recovery from it
  MonteCarloGoodput simulated, simulated_far_only;
};

// What the text and the HTML show: the tiers, a headline with the best (k, K), the schemes
// (two-level, far tier only) with analytic and simulated goodput, and the rules as text lines.
struct TierTables {
  std::vector<std::string> tiers, schemes;  // headers
  std::vector<std::vector<std::string>> tier_rows, scheme_rows;
  std::string headline, rules;
};
TierTables tier_tables(const TierProjection& t);

// The tiers, the best (k, K) with the analytic and simulated goodput beside the far tier
// alone, and the rules; as text or Markdown, under a heading of its own.
void print_tier_projection(const TierProjection& t, bool markdown, std::ostream& out);
// A heading `heading` "Two-level checkpoint intervals", the table and rules, and a chart of
// waste against the near interval k s, one curve per K around the best.
std::string tier_section_html(const TierProjection& t, const std::string& heading);

}  // namespace ckpt::harness
