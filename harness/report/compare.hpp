#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/report/case_matching.hpp"
#include "harness/report/run_input.hpp"
#include "harness/results/stats.hpp"

namespace ckpt::harness {

enum class Verdict { faster, slower, no_change, too_few };
std::string verdict_text(Verdict v);

// NEW against BASE: the ratio of median bandwidths, the Mann–Whitney test of NEW's bandwidth
// samples against BASE's and the verdict at `alpha`.
struct DirectionComparison {
  std::string direction;   // "write" or "read"
  SampleStats base, next;  // GiB/s
  double ratio = 0;        // next.median / base.median
  MannWhitney test;
  Verdict verdict = Verdict::too_few;
};
// too_few below kMinSamples a side or where the sizes cannot reach p < alpha (too_few_samples).
Verdict decide(const SampleStats& base, const SampleStats& next, const MannWhitney& test,
               double alpha);

struct CaseComparison {
  std::string label;         // the swept keys
  bool same_config = false;  // config_hash identical
  std::vector<DirectionComparison> directions;
  std::string
      workload_difference;  // the model, parallel, state, ranks or data keys (or bytes) that differ
  std::string base_workload, next_workload;  // workload_hash of each side ("" when missing)
  bool same_workload = false;                // workload_hash present and identical
};

struct Comparison {
  CaseMatch match = CaseMatch::config;
  std::vector<CaseComparison> cases;
  std::vector<std::string> only_base;  // labels of unmatched cases
  std::vector<std::string> only_new;
  bool any_slower() const;
};

// Cases are matched by config_hash (CaseMatch::workload: workload_hash) first, then (among the
// rest) by equal swept keys; each case is used once. Failed cases and those of a backend that
// stores nothing take part without a verdict ("too few samples" when they have no samples).
Comparison compare_runs(const RunRecord& base, const RunRecord& next, double alpha,
                        CaseMatch match = CaseMatch::config);

// Why BASE and NEW do not measure the same workload, or "" when they do: their cases belong to
// different campaigns, or a matched case's config_hash differs in what is checkpointed — the
// model, parallel, state, ranks or data keys, or bytes_per_checkpoint (naming at most a few) —
// rather than in how (backend, strategy, cache: what compare is for). Matched by workload_hash,
// only a matched case whose workload_hash differs (or is missing) is another workload: the
// campaigns may differ. `compare` refuses such runs unless told to compare them anyway.
std::string workload_difference(const Comparison& c, const RunRecord& base, const RunRecord& next);

void print_comparison(const Comparison& c, const RunRecord& base, const RunRecord& next,
                      double alpha, bool markdown, std::ostream& out);

}  // namespace ckpt::harness
