// A baseline pooled from several runs (ckptbench gate --update-baseline --pool): each run's
// samples kept with its size, the oldest dropped beyond kMaxPooledRuns, the file round trip, the
// run-to-run spread and what it lets the gate detect; baselines as untrusted input (bounded,
// typed, every ratio positive and finite); another campaign or configuration refused.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/report/gate.hpp"
#include "harness/results/schema_version.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using test_support::TempDir;
namespace fs = std::filesystem;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// A calibrated run of one 1 GiB case: write seconds against a calibration of 1 GiB/s throughout,
// so its write ratios are 1 / seconds.
RunRecord run_with(TempDir& dir, const std::string& name, const std::vector<double>& write_seconds,
                   const std::string& campaign = "ci-gate", const std::string& hash = "abc",
                   const std::string& workload = "w1") {
  const nlohmann::json calibration{
      {"write_gib_per_s", std::vector<double>(write_seconds.size() + 1, 1.0)}};
  const nlohmann::json j{
      {"schema_version", kResultsSchemaVersion},
      {"campaign", campaign},
      {"case", nlohmann::json::object()},
      {"case_index", 0},
      {"status", "ok"},
      {"bytes_per_checkpoint", kGiB},
      {"config_hash", hash},
      {"workload_hash", workload},
      {"config", {{"campaign", {{"name", campaign}}}}},
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
    b = make_baseline(
        run_with(dir, "r" + std::to_string(i), std::vector<double>(2, static_cast<double>(i + 1))),
        &b, true);
  }
  ASSERT_EQ(b.cases[0].write_runs.size(), kMaxPooledRuns);
  EXPECT_EQ(b.cases[0].write_runs.front(), 2u);  // r0 (one sample) is gone
  EXPECT_EQ(b.cases[0].write.size(), 2 * kMaxPooledRuns);
  EXPECT_DOUBLE_EQ(b.cases[0].write.front(), 0.5);  // r1: 1 / 2 s
}

TEST(GatePool, RunSizesThatDoNotAddUpAreRefused) {
  TempDir dir;
  const auto path = dir.write(
      "bad.json", R"({"format": "ckptbench-gate-baseline", "version": 1, "campaign": "ci-gate",
    "machine_class": {"machine": "x86_64", "cores": 2, "file_system": "ext4"},
    "cases": [{"case": {}, "config_hash": "abc", "write_ratios": [1, 1, 1], "write_runs": [2, 2]}]})");
  try {
    load_baseline(path);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() +
                  ": cases[0]: `write_runs` adds up to 4 samples, the ratios hold 3 — "
                  "take the baseline again with --update-baseline");
  }
}

// Three runs of five ratios with medians 1.0, 1.1 and 0.8: pooled median 1.0 (the 8th of 15).
const std::vector<double> kThreeRuns{0.98, 0.99, 1.00, 1.01, 1.02, 1.08, 1.09, 1.10,
                                     1.11, 1.12, 0.78, 0.79, 0.80, 0.81, 0.82};
const std::vector<std::size_t> kThreeSizes{5, 5, 5};

TEST(GatePool, SpreadIsTheStandardDeviationOfTheRunsLogMedians) {
  // ln 1.0, ln 1.1, ln 0.8: mean −0.04261, standard deviation 0.16345.
  EXPECT_NEAR(run_spread(kThreeRuns, kThreeSizes).value(), 0.1634472, 1e-6);
  EXPECT_FALSE(run_spread(kThreeRuns, {10, 5}).has_value());  // fewer than kMinRunsForSpread runs
  EXPECT_FALSE(run_spread(kThreeRuns, {}).has_value());
}

TEST(GatePool, TheSpreadSetsTheSmallestDetectableChange) {
  Baseline b;
  b.machine.name = "x86_64-2cpu-ext4";
  b.cases.push_back(
      CaseRatios{"-", nlohmann::json::object(), "h1", kThreeRuns, {}, kThreeSizes, {}});
  const auto gate = [&](double factor) {
    std::vector<double> now;
    for (double x : {0.98, 0.99, 1.00, 1.01, 1.02, 0.97, 1.03, 1.00}) now.push_back(factor * x);
    return gate_run({CaseRatios{"-", nlohmann::json::object(), "h1", now, {}}}, b, 0.10,
                    kGateAlpha);
  };
  // σ = √(s² / 3 + s²) = 0.18873 with s = 0.16345: 1 − exp(−4 σ) = 53.0 %.
  const GateRow within = gate(0.75).rows.at(0);
  EXPECT_TRUE(within.detect.spread_of_runs);
  EXPECT_NEAR(within.detect.sigma, 0.1887325, 1e-6);
  EXPECT_NEAR(within.detect.smallest, 0.5299565, 1e-6);
  EXPECT_NEAR(within.tolerance, 0.5299565, 1e-6);
  EXPECT_EQ(within.base_runs, 3u);
  EXPECT_NEAR(within.change, -0.25, 1e-12);
  EXPECT_LT(within.test.p_value, kGateAlpha);
  EXPECT_EQ(within.verdict, GateVerdict::passed);
  EXPECT_EQ(gate(0.45).rows.at(0).verdict, GateVerdict::regressed);
  // And such a baseline cannot be used to gate 10 %.
  try {
    refuse_blind_baseline(gate(1.0), "pooled.json", 0.10, kSpreadFactor);
    FAIL() << "not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "pooled.json: case - write: its 3 runs' median ratios spread 16.3 % (standard "
              "deviation of their logs), so "
              "the smallest change it can detect at --spread-factor 4 is 53.0 %, wider than the "
              "tolerance of 10.0 % it "
              "is used with, and no other row of the case does better — a regression between the "
              "two would pass unseen; take the baseline "
              "again on a quiet "
              "machine of this class (ci/gate.sh --update-baseline), or gate with --tolerance 0.53 "
              "or more");
  }
}

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(accepted)";
}

// A baseline file of one case whose write ratios are `ratios` (JSON text).
std::string baseline_text(const std::string& ratios) {
  return R"({"format": "ckptbench-gate-baseline", "version": 1, "campaign": "ci-gate",
    "machine_class": {"machine": "x86_64", "cores": 2, "file_system": "ext4"}, )"
         R"("cases": [{"case": {}, "config_hash": "abc", "write_ratios": )" +
         ratios + "}]}";
}

TEST(GateBaselineInput, RatiosMustBePositiveAndFinite) {
  TempDir dir;
  const auto negative = dir.write("negative.json", baseline_text("[1.0, -0.5, 1.0]"));
  EXPECT_EQ(
      refusal([&] { load_baseline(negative); }),
      negative.string() +
          ": cases[0]: `write_ratios[1]` is -0.5, not a positive finite number — take the baseline "
          "again with --update-baseline");
  const auto zero = dir.write("zero.json", baseline_text("[0]"));
  EXPECT_EQ(refusal([&] { load_baseline(zero); }),
            zero.string() +
                ": cases[0]: `write_ratios[0]` is 0, not a positive finite number — take the "
                "baseline again "
                "with --update-baseline");
  const auto huge = dir.write("huge.json", baseline_text("[1e999]"));  // beyond a double
  EXPECT_EQ(refusal([&] { load_baseline(huge); }),
            huge.string() + ": not JSON (number overflow parsing '1e999')");
  const auto text = dir.write("text.json", baseline_text(R"([1, "2"])"));
  EXPECT_EQ(refusal([&] { load_baseline(text); }),
            text.string() +
                ": cases[0]: `write_ratios[1]` is \"2\", not a positive finite number — take the "
                "baseline "
                "again with --update-baseline");
}

TEST(GateBaselineInput, FieldsAreTypedAndNamed) {
  TempDir dir;
  const auto version =
      dir.write("version.json", R"({"format": "ckptbench-gate-baseline", "version": "1"})");
  EXPECT_EQ(refusal([&] { load_baseline(version); }),
            version.string() +
                ": baseline version \"1\" — this ckptbench reads version 1; take it again with "
                "--update-baseline");
  const auto format = dir.write("format.json", R"({"format": 3})");
  EXPECT_EQ(
      refusal([&] { load_baseline(format); }),
      format.string() +
          ": not a gate baseline (`format` is not \"ckptbench-gate-baseline\"); write one with "
          "--update-baseline");
  const auto hash = dir.write(
      "hash.json", R"({"format": "ckptbench-gate-baseline", "version": 1, "campaign": "ci-gate",
    "machine_class": {"machine": "x86_64", "cores": 2, "file_system": "ext4"}, "cases": [{"case": {}}]})");
  EXPECT_EQ(refusal([&] { load_baseline(hash); }),
            hash.string() + ": cases[0]: `config_hash` must be non-empty text");
  const auto campaign = dir.write(
      "campaign.json", R"({"format": "ckptbench-gate-baseline", "version": 1, "campaign": 7,
    "machine_class": {"machine": "x86_64", "cores": 2, "file_system": "ext4"}, "cases": []})");
  EXPECT_EQ(refusal([&] { load_baseline(campaign); }),
            campaign.string() + ": `campaign` must be non-empty text");
  const auto memory =
      dir.write("memory.json",
                baseline_text("[1]").replace(baseline_text("[1]").find(R"("file_system": "ext4")"),
                                             21, R"("file_system": "ext4", "memory_bytes": -1)"));
  EXPECT_EQ(refusal([&] { load_baseline(memory); }),
            memory.string() + ": machine_class: `memory_bytes` is not a byte count");
}

TEST(GateBaselineInput, NestingAndSizeAreBounded) {
  TempDir dir;
  const auto deep = dir.write("deep.json", std::string(100'000, '[') + std::string(100'000, ']'));
  EXPECT_EQ(refusal([&] { load_baseline(deep); }),
            deep.string() + ": JSON nested deeper than 64 levels — not a gate baseline");
  const auto big = dir.write("big.json", std::string(kMaxBaselineBytes + 1, ' '));
  EXPECT_EQ(refusal([&] { load_baseline(big); }),
            big.string() +
                ": 16777217 bytes — a gate baseline is at most 16777216 "
                "bytes; take it again with --update-baseline");
}

TEST(GateWorkload, AnotherCampaignOrConfigurationIsRefused) {
  TempDir dir;
  const Baseline base = make_baseline(run_with(dir, "base", {1.0, 1.0}), nullptr);
  const fs::path file = "ci-gate.json";
  const RunRecord other = run_with(dir, "other", {1.0, 1.0}, "nightly", "abc");
  const std::string where = other.file.string();
  for (const BaselineUse use : {BaselineUse::gate, BaselineUse::pool, BaselineUse::replace}) {
    EXPECT_EQ(refusal([&] { refuse_other_workload(other, run_ratios(other), base, file, use); }),
              "ci-gate.json: a baseline of campaign `ci-gate`, the run (" + where +
                  ") is of `nightly` — another "
                  "campaign's ratios are not " +
                  (use == BaselineUse::gate ? "gated against" : "written into") +
                  " it; use results/baselines/nightly-<class>.json, or pass --allow-other-workload "
                  "if the two are meant "
                  "to measure the same");
  }
  const RunRecord changed = run_with(dir, "changed", {1.0, 1.0}, "ci-gate", "def");
  EXPECT_EQ(refusal([&] {
              refuse_other_workload(changed, run_ratios(changed), base, file, BaselineUse::pool);
            }),
            "ci-gate.json: case - was taken with config_hash abc, the run (" +
                changed.file.string() +
                ") has def — another configuration is another workload and is not written into it; "
                "take the baseline "
                "again with --update-baseline, or pass --allow-other-workload to pool it anyway");
  EXPECT_EQ(refusal([&] {
              refuse_other_workload(changed, run_ratios(changed), base, file, BaselineUse::replace);
            }),
            "(accepted)");
  Baseline unmatched = base;
  unmatched.cases[0].swept = {{"strategy.chunk_bytes", 4096}};
  unmatched.cases[0].config_hash = "zzz";
  EXPECT_EQ(refusal([&] {
              refuse_other_workload(changed, run_ratios(changed), unmatched, file,
                                    BaselineUse::gate);
            }),
            "ci-gate.json: no case of the run (" + changed.file.string() +
                ") matches a case of the baseline — nothing "
                "would be gated; take the baseline of this campaign with --update-baseline");
}

TEST(GateWorkload, MatchedOnWorkloadHashAnotherCampaignOfTheSameBytesIsGated) {
  TempDir dir;
  const Baseline base = make_baseline(run_with(dir, "base", {1.0, 1.0}), nullptr);
  const fs::path file = "ci-gate.json";
  save_baseline(base, dir.path() / file);
  EXPECT_EQ(load_baseline(dir.path() / file).cases.at(0).workload_hash, "w1");
  // Another campaign and configuration, the same workload: refused by config, gated by workload.
  const RunRecord tuned = run_with(dir, "tuned", {1.0, 1.0}, "nightly", "def", "w1");
  const std::vector<CaseRatios> ratios = run_ratios(tuned);
  EXPECT_NE(refusal([&] { refuse_other_workload(tuned, ratios, base, file, BaselineUse::gate); }),
            "(accepted)");
  EXPECT_EQ(refusal([&] {
              refuse_other_workload(tuned, ratios, base, file, BaselineUse::gate,
                                    CaseMatch::workload);
            }),
            "(accepted)");
  const GateResult gated =
      gate_run(ratios, base, 0.1, kGateAlpha, kSpreadFactor, CaseMatch::workload);
  ASSERT_EQ(gated.rows.size(), 1u);
  EXPECT_FALSE(gated.rows[0].same_config);
  EXPECT_EQ(gated.match, CaseMatch::workload);
  // Another workload, or a baseline that predates workload_hash, is refused by name.
  const RunRecord other = run_with(dir, "other", {1.0, 1.0}, "nightly", "def", "w2");
  EXPECT_EQ(refusal([&] {
              refuse_other_workload(other, run_ratios(other), base, file, BaselineUse::gate,
                                    CaseMatch::workload);
            }),
            "ci-gate.json: case - has workload_hash w1, the run (" + other.file.string() +
                ") has w2 — another workload's ratios are not gated against it; pass "
                "--allow-other-workload to gate it anyway");
  Baseline old = base;
  old.cases[0].workload_hash.clear();
  EXPECT_EQ(refusal([&] {
              refuse_other_workload(tuned, ratios, old, file, BaselineUse::gate,
                                    CaseMatch::workload);
            }),
            "ci-gate.json: case - has no workload_hash (a baseline taken before baselines "
            "recorded it) — take the baseline again with --update-baseline to match on the "
            "workload");
}

}  // namespace
}  // namespace ckpt::harness
