// A baseline pooled from several runs (ckptbench gate --update-baseline --pool): each run's
// samples kept with its size, the oldest dropped beyond kMaxPooledRuns, the file round trip, and
// the tolerance widened to kSpreadFactor × the largest deviation of one run's median from the
// pooled median.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/report/gate.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using test_support::TempDir;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// A calibrated run of one 1 GiB case: write seconds against a calibration of 1 GiB/s throughout,
// so its write ratios are 1 / seconds.
RunRecord run_with(TempDir& dir, const std::string& name, const std::vector<double>& write_seconds) {
  const nlohmann::json calibration{{"write_gib_per_s", std::vector<double>(write_seconds.size() + 1, 1.0)}};
  const nlohmann::json j{{"campaign", "ci-gate"},
                         {"case", nlohmann::json::object()},
                         {"case_index", 0},
                         {"status", "ok"},
                         {"bytes_per_checkpoint", kGiB},
                         {"config_hash", "abc"},
                         {"config", {{"campaign", {{"name", "ci-gate"}}}}},
                         {"samples", {{"write_seconds", write_seconds}}},
                         {"calibration", calibration},
                         {"environment", {{"machine", "x86_64"}, {"cores", 2}, {"file_system", "ext4"}}}};
  return load_run(dir.write(name + "/results.jsonl", j.dump() + "\n"));
}

TEST(GatePool, EachRunKeptWithItsSizeThroughTheFile) {
  TempDir dir;
  const Baseline first = make_baseline(run_with(dir, "a", {1.0, 2.0}), nullptr);
  EXPECT_TRUE(first.cases[0].write_runs.empty());  // one run
  const Baseline pooled = make_baseline(run_with(dir, "b", {4.0, 4.0, 4.0}), &first, true);
  ASSERT_EQ(pooled.cases.size(), 1u);
  EXPECT_EQ(pooled.cases[0].write, (std::vector<double>{1.0, 0.5, 0.25, 0.25, 0.25}));
  EXPECT_EQ(pooled.cases[0].write_runs, (std::vector<std::size_t>{2, 3}));
  EXPECT_TRUE(pooled.cases[0].read_runs.empty());
  const auto path = dir.path() / "base.json";
  save_baseline(pooled, path);
  const Baseline loaded = load_baseline(path);
  EXPECT_EQ(loaded.cases[0].write, pooled.cases[0].write);
  EXPECT_EQ(loaded.cases[0].write_runs, (std::vector<std::size_t>{2, 3}));
  // Without --pool the run replaces the case.
  const Baseline replaced = make_baseline(run_with(dir, "c", {2.0}), &loaded);
  EXPECT_EQ(replaced.cases[0].write, (std::vector<double>{0.5}));
  EXPECT_TRUE(replaced.cases[0].write_runs.empty());
}

TEST(GatePool, TheOldestRunsDropBeyondTheLimit) {
  TempDir dir;
  Baseline b = make_baseline(run_with(dir, "r0", {1.0}), nullptr);
  for (std::size_t i = 1; i <= kMaxPooledRuns; ++i) {
    b = make_baseline(run_with(dir, "r" + std::to_string(i), std::vector<double>(2, static_cast<double>(i + 1))), &b, true);
  }
  ASSERT_EQ(b.cases[0].write_runs.size(), kMaxPooledRuns);
  EXPECT_EQ(b.cases[0].write_runs.front(), 2u);  // r0 (one sample) is gone
  EXPECT_EQ(b.cases[0].write.size(), 2 * kMaxPooledRuns);
  EXPECT_DOUBLE_EQ(b.cases[0].write.front(), 0.5);  // r1: 1 / 2 s
}

TEST(GatePool, RunSizesThatDoNotAddUpAreRefused) {
  TempDir dir;
  const auto path = dir.write("bad.json", R"({"format": "ckptbench-gate-baseline", "version": 1,
    "machine_class": {"machine": "x86_64", "cores": 2, "file_system": "ext4"},
    "cases": [{"case": {}, "write_ratios": [1, 1, 1], "write_runs": [2, 2]}]})");
  try {
    load_baseline(path);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": cases[0]: `write_runs` adds up to 4 samples, the ratios hold 3 — "
                                                     "take the baseline again with --update-baseline");
  }
}

// Three runs of five ratios with medians 1.0, 1.1 and 0.8: pooled median 1.0 (the 8th of 15).
const std::vector<double> kThreeRuns{0.98, 0.99, 1.00, 1.01, 1.02, 1.08, 1.09, 1.10, 1.11, 1.12, 0.78, 0.79, 0.80, 0.81, 0.82};
const std::vector<std::size_t> kThreeSizes{5, 5, 5};

TEST(GatePool, SpreadIsTheLargestDeviationOfARunFromThePooledMedian) {
  EXPECT_NEAR(run_spread(kThreeRuns, kThreeSizes), 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(run_spread(kThreeRuns, {10, 5}), 0.0);  // fewer than kMinRunsForSpread runs
  EXPECT_DOUBLE_EQ(run_spread(kThreeRuns, {}), 0.0);
}

TEST(GatePool, TheSpreadWidensTheTolerance) {
  Baseline b;
  b.machine.name = "x86_64-2cpu-ext4";
  b.cases.push_back(CaseRatios{"-", nlohmann::json::object(), "h1", kThreeRuns, {}, kThreeSizes, {}});
  const auto gate = [&](double factor) {
    std::vector<double> now;
    for (double x : {0.98, 0.99, 1.00, 1.01, 1.02, 0.97, 1.03, 1.00}) now.push_back(factor * x);
    return gate_run({CaseRatios{"-", nlohmann::json::object(), "h1", now, {}}}, b, 0.10, kGateAlpha).rows.at(0);
  };
  // Tolerance max(10 %, 1.5 × 20 %) = 30 %: a 25 % fall is within the baseline's own spread.
  const GateRow within = gate(0.75);
  EXPECT_NEAR(within.tolerance, 0.3, 1e-12);
  EXPECT_EQ(within.base_runs, 3u);
  EXPECT_NEAR(within.change, -0.25, 1e-12);
  EXPECT_LT(within.test.p_value, kGateAlpha);
  EXPECT_EQ(within.verdict, GateVerdict::passed);
  EXPECT_EQ(gate(0.65).verdict, GateVerdict::regressed);
}

}  // namespace
}  // namespace ckpt::harness
