// The gate's verdicts (gate_decide, GateVerdict) on hand-made ratios and results files: exact
// verdicts for unchanged, regressed beyond tolerance, a drop within noise, a drop within tolerance,
// too few samples; the calibration pairing (geometric mean of the samples around an iteration), a
// run without calibration, the baseline file round trip and the machine class.
#include "harness/report/gate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/common/elapsed.hpp"
#include "harness/results/schema_version.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

using test_support::TempDir;

std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * factor);
  return out;
}

// Ten ratios around 1 with a ±4 % spread.
const std::vector<double> kSteady{1.00, 0.97, 1.03, 0.99, 1.01, 0.96, 1.04, 1.00, 0.98, 1.02};
// Ten ratios around 1 with a ±40 % spread (a busy machine).
const std::vector<double> kNoisy{1.0, 0.6, 1.4, 0.8, 1.2, 0.7, 1.3, 0.9, 1.1, 1.0};

Baseline baseline_with(const std::vector<double>& write, const std::vector<double>& read) {
  Baseline b;
  b.machine.name = "x86_64-2cpu-ext4";
  b.cases.push_back(CaseRatios{"-", nlohmann::json::object(), "h1", write, read});
  return b;
}

GateResult gate_one(const Baseline& b, const std::vector<double>& write,
                    const std::vector<double>& read) {
  return gate_run({CaseRatios{"-", nlohmann::json::object(), "h1", write, read}}, b, 0.10,
                  kGateAlpha);
}

TEST(GateVerdict, UnchangedPasses) {
  const GateResult r = gate_one(baseline_with(kSteady, kSteady), kSteady, kSteady);
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[2].direction, "write+read");
  EXPECT_EQ(r.rows[2].verdict, GateVerdict::passed);
  EXPECT_EQ(r.rows[0].verdict, GateVerdict::passed);
  EXPECT_EQ(r.rows[1].verdict, GateVerdict::passed);
  EXPECT_DOUBLE_EQ(r.rows[0].change, 0.0);
  EXPECT_FALSE(r.any_regressed());
}

TEST(GateVerdict, DropBeyondToleranceAndNoiseRegresses) {
  const GateResult r = gate_one(baseline_with(kSteady, kSteady), scaled(kSteady, 0.8), kSteady);
  ASSERT_EQ(r.rows.size(), 3u);
  // write+read: each iteration's √(write × read) = √0.8 × its old value, −10.56 %: beyond 10 %.
  EXPECT_EQ(r.rows[2].direction, "write+read");
  EXPECT_NEAR(r.rows[2].change, std::sqrt(0.8) - 1, 1e-12);
  EXPECT_EQ(r.rows[2].verdict, GateVerdict::regressed);
  EXPECT_EQ(r.rows[0].direction, "write");
  EXPECT_EQ(r.rows[0].verdict, GateVerdict::regressed);
  EXPECT_NEAR(r.rows[0].change, -0.2, 1e-12);
  EXPECT_LT(r.rows[0].test.p_value, kGateAlpha);
  EXPECT_EQ(r.rows[1].verdict, GateVerdict::passed);
  EXPECT_TRUE(r.any_regressed());
}

TEST(GateVerdict, RiseBeyondToleranceIsAnImprovement) {
  const GateResult r = gate_one(baseline_with(kSteady, kSteady), kSteady, scaled(kSteady, 1.25));
  EXPECT_EQ(r.rows[1].verdict, GateVerdict::improved);
  EXPECT_FALSE(r.any_regressed());
}

TEST(GateVerdict, DropWithinNoisePasses) {
  // A 15 % lower median, but the samples overlap: not significant, and below the 49 % these
  // iterations can detect.
  const GateResult r = gate_one(baseline_with(kNoisy, kNoisy), scaled(kNoisy, 0.85), kNoisy);
  EXPECT_NEAR(r.rows[0].change, -0.15, 1e-12);
  EXPECT_NEAR(r.rows[0].tolerance, 0.4902690, 1e-6);
  EXPECT_GE(r.rows[0].test.p_value, kGateAlpha);
  EXPECT_EQ(r.rows[0].verdict, GateVerdict::passed);
}

TEST(GateVerdict, SignificantDropWithinTolerancePasses) {
  // 6 % lower and significant on a steady machine: below the 10 % tolerance.
  const GateResult r = gate_one(baseline_with(kSteady, kSteady), scaled(kSteady, 0.94), kSteady);
  EXPECT_LT(r.rows[0].test.p_value, kGateAlpha);
  EXPECT_EQ(r.rows[0].verdict, GateVerdict::passed);
  // --tolerance 0.05 is below what these ten iterations can detect (6.43 %): 6 % still passes, 8 %
  // regresses.
  const auto at_five = [&](double factor) {
    return gate_run({CaseRatios{"-", {}, "h1", scaled(kSteady, factor), kSteady}},
                    baseline_with(kSteady, kSteady), 0.05, kGateAlpha)
        .rows[0];
  };
  EXPECT_NEAR(at_five(0.94).tolerance, 0.0643257, 1e-6);
  EXPECT_EQ(at_five(0.94).verdict, GateVerdict::passed);
  EXPECT_EQ(at_five(0.92).verdict, GateVerdict::regressed);
}

TEST(GateVerdict, TooFewSamplesIsInsufficient) {
  const std::vector<double> four{0.5, 0.5, 0.5, 0.5};
  const GateResult r = gate_one(baseline_with(kSteady, kSteady), four, {});
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].verdict,
            GateVerdict::insufficient);  // 4 < kGateMinSamples, however far it fell
  EXPECT_EQ(r.rows[1].verdict, GateVerdict::insufficient);  // no read samples now
  EXPECT_FALSE(r.any_regressed());
}

TEST(GateVerdict, CasesMatchByHashThenSweptKeys) {
  Baseline b;
  b.cases.push_back(
      CaseRatios{"strategy.chunk_bytes=0", {{"strategy.chunk_bytes", 0}}, "other", kSteady, {}});
  b.cases.push_back(
      CaseRatios{"strategy.chunk_bytes=4096", {{"strategy.chunk_bytes", 4096}}, "h2", kSteady, {}});
  const std::vector<CaseRatios> run{
      CaseRatios{
          "strategy.chunk_bytes=0", {{"strategy.chunk_bytes", 0}}, "new", scaled(kSteady, 0.5), {}},
      CaseRatios{"x", {{"strategy.chunk_bytes", 1}}, "h2", kSteady, {}},
      CaseRatios{"strategy.chunk_bytes=8", {{"strategy.chunk_bytes", 8}}, "h3", kSteady, {}}};
  const GateResult r = gate_run(run, b, 0.1, kGateAlpha);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].verdict, GateVerdict::regressed);  // by swept keys
  EXPECT_EQ(r.rows[1].verdict, GateVerdict::passed);     // by config_hash
  EXPECT_EQ(r.only_run, std::vector<std::string>{"strategy.chunk_bytes=8"});
  EXPECT_TRUE(r.only_baseline.empty());
}

// kSteady's logs lie within a median absolute deviation of 0.01 of their median: the median's
// standard error is 1.2533 × 1.4826 × MAD / √10 = 1.1753 %.
TEST(GateDetection, ABaselineOfOneRunUsesItsMediansStandardError) {
  const Detection d = detection(kSteady, {}, kSteady, kSpreadFactor);
  EXPECT_FALSE(d.spread_of_runs);
  EXPECT_NEAR(d.base_spread, 0.0117535, 1e-6);
  EXPECT_NEAR(d.run_error, 0.0117535, 1e-6);
  EXPECT_NEAR(d.sigma, 0.0166219, 1e-6);     // √(s² / 1 + s²)
  EXPECT_NEAR(d.smallest, 0.0643257, 1e-6);  // 1 − exp(−4 σ)
  EXPECT_DOUBLE_EQ(d.baseline_smallest, d.smallest);
  EXPECT_DOUBLE_EQ(median_log_error({1.0}), 0.0);
}

TEST(GateDetection, ANoisierRunRaisesItsOwnThresholdButNotTheBaselines) {
  const Detection d = detection(kSteady, {}, kNoisy, kSpreadFactor);
  EXPECT_NEAR(d.run_error, 0.1191249, 1e-6);
  EXPECT_NEAR(d.sigma, 0.1197033, 1e-6);  // √(s² + e²), e > s
  EXPECT_NEAR(d.smallest, 0.3804819, 1e-6);
  EXPECT_NEAR(d.baseline_smallest, 0.0643257, 1e-6);
  // A 30 % drop of the noisy run: beyond the 10 % tolerance but within what it can show.
  const GateRow row = gate_one(baseline_with(kSteady, {}), scaled(kNoisy, 0.7), {}).rows.at(0);
  EXPECT_NEAR(row.tolerance, 0.3804819, 1e-6);
  EXPECT_EQ(row.verdict, GateVerdict::passed);
}

TEST(GateRefusal, ABaselineTooSpreadToDetectTheToleranceIsRefused) {
  const GateResult r = gate_one(baseline_with(kNoisy, {}), kNoisy, {});
  try {
    refuse_blind_baseline(r, "b.json", 0.10, kSpreadFactor);
    FAIL() << "not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "b.json: case - write: its median ratio is uncertain by 11.9 % (standard error from "
              "its iterations; a "
              "baseline of 1 run), so the smallest change it can detect at --spread-factor 4 is "
              "49.0 %, wider than the "
              "tolerance of 10.0 % it is used with, and no other row of the case does better — "
              "a regression between the two would pass unseen; take the baseline "
              "again on a quiet machine of this class (ci/gate.sh --update-baseline), or gate with "
              "--tolerance 0.50 or "
              "more");
  }
  EXPECT_NO_THROW(refuse_blind_baseline(r, "b.json", 0.50, kSpreadFactor));
  EXPECT_NO_THROW(refuse_blind_baseline(gate_one(baseline_with(kSteady, {}), kNoisy, {}), "b.json",
                                        0.10, kSpreadFactor));
}

TEST(GateRefusal, ANoisyRowOfACaseAnotherRowGatesIsNotedAndGatedAtItsOwnLevel) {
  // Steady writes, noisy reads: the case is gated at 10 % by its write row; the read row, which
  // cannot see 10 %, is gated at its own 49.0 % and says so instead of refusing the baseline.
  const GateResult r = gate_one(baseline_with(kSteady, kNoisy), kSteady, kNoisy);
  const std::vector<std::string> notes = refuse_blind_baseline(r, "b.json", 0.10, kSpreadFactor);
  ASSERT_EQ(notes.size(), 2u);  // read, and write+read, which carries the noisy reads
  EXPECT_TRUE(notes[1].starts_with("note: case - write+read: "));
  EXPECT_EQ(notes[0],
            "note: case - read: its median ratio is uncertain by 11.9 % (standard error from its "
            "iterations; a baseline of 1 run), so this row detects only changes over 49.0 % and "
            "is gated at that; the case's other rows gate the 10.0 % tolerance");
  EXPECT_NEAR(r.rows.at(1).tolerance, 0.4904, 1e-3);
  EXPECT_TRUE(refuse_blind_baseline(gate_one(baseline_with(kSteady, kSteady), kSteady, kSteady),
                                    "b.json", 0.10, kSpreadFactor)
                  .empty());
}

// A results.jsonl line of a 1 GiB case with these write seconds and calibration rates.
std::string result_line(const std::vector<double>& write_seconds,
                        const nlohmann::json& calibration) {
  const nlohmann::json j{{"schema_version", kResultsSchemaVersion},
                         {"campaign", "ci-gate"},
                         {"case", nlohmann::json::object()},
                         {"case_index", 0},
                         {"status", "ok"},
                         {"bytes_per_checkpoint", static_cast<std::uint64_t>(kGiB)},
                         {"config_hash", "abc"},
                         {"config", {{"campaign", {{"name", "ci-gate"}}}}},
                         {"samples", {{"write_seconds", write_seconds}}},
                         {"calibration", calibration},
                         {"environment",
                          {{"machine", "x86_64"},
                           {"cores", 2},
                           {"file_system", "ext4"},
                           {"cpu_model", "AMD EPYC"},
                           {"memory_bytes", 25'000'000'000ULL},
                           {"time_utc", "2026-12-01T17:00:00Z"}}}};
  return j.dump() + "\n";
}

TEST(GateRatios, EachIterationOverTheGeometricMeanOfTheCalibrationsAroundIt) {
  TempDir dir;
  // Case at 1, 2, 1 GiB/s; calibration 2, 2, 8, 2 GiB/s: peers 2, 4, 4.
  const nlohmann::json cal{{"write_gib_per_s", {2.0, 2.0, 8.0, 2.0}},
                           {"read_gib_per_s", nlohmann::json::array()}};
  const auto file = dir.write("run/results.jsonl", result_line({1.0, 0.5, 1.0}, cal));
  const std::vector<CaseRatios> r = run_ratios(load_run(file.parent_path()));
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].write.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].write[0], 0.5);
  EXPECT_DOUBLE_EQ(r[0].write[1], 0.5);
  EXPECT_DOUBLE_EQ(r[0].write[2], 0.25);
  EXPECT_TRUE(r[0].read.empty());
}

TEST(GateRatios, RunWithoutCalibrationNamesTheFileAndTheFix) {
  TempDir dir;
  const auto file = dir.write("run/results.jsonl", result_line({1.0}, nullptr));
  try {
    run_ratios(load_run(file));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              file.string() +
                  ":1: case 0 (-) has no calibration: the gate needs the calibration measured in "
                  "the same "
                  "run — set `[measure] calibration = true` in the campaign (or run it with --set "
                  "measure.calibration=true)");
  }
}

TEST(GateRatios, ARunWhoseCalibrationOrRatioIsNotPositiveAndFiniteIsRefused) {
  TempDir dir;
  const nlohmann::json zero{{"write_gib_per_s", {1.0, 0.0, 1.0}}};
  const auto file = dir.write("zero/results.jsonl", result_line({1.0, 1.0}, zero));
  try {
    run_ratios(load_run(file));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              file.string() +
                  ":1: calibration: `write_gib_per_s[1]` is 0.0, not a positive "
                  "finite number — the run's results are damaged: run the "
                  "campaign again");
  }
  // A zero time gives no bandwidth (0 GiB/s), so no ratio the ranks could hold.
  const nlohmann::json one{{"write_gib_per_s", {1.0, 1.0, 1.0}}};
  const auto timeless = dir.write("timeless/results.jsonl", result_line({1.0, 0.0}, one));
  try {
    run_ratios(load_run(timeless));
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), timeless.string() +
                                         ":1: `samples.write_seconds[1]` gives the ratio 0 to its "
                                         "calibration, not a positive finite number — the run's "
                                         "results are damaged: run the campaign again");
  }
}

TEST(GateBaseline, RoundTripKeepsRatiosClassAndOtherCases) {
  TempDir dir;
  const nlohmann::json cal{{"write_gib_per_s", {1.0, 1.0, 1.0}}};
  const auto file = dir.write("run/results.jsonl", result_line({2.0, 4.0}, cal));
  const RunRecord run = load_run(file);
  Baseline previous;
  previous.cases.push_back(CaseRatios{"other", {{"strategy.chunk_bytes", 4096}}, "zzz", {0.5}, {}});
  const Baseline made = make_baseline(run, &previous);
  const auto path = dir.path() / "baselines" / "ci-gate-x86_64-2cpu-ext4.json";
  save_baseline(made, path);
  const Baseline loaded = load_baseline(path);
  EXPECT_EQ(loaded.campaign, "ci-gate");
  EXPECT_EQ(loaded.created_utc, "2026-12-01T17:00:00Z");
  EXPECT_EQ(loaded.machine.name, "x86_64-2cpu-ext4");
  EXPECT_EQ(loaded.machine.cpu_model, "AMD EPYC");
  EXPECT_EQ(loaded.machine.memory_bytes, 25'000'000'000ULL);
  ASSERT_EQ(loaded.cases.size(), 2u);
  EXPECT_EQ(loaded.cases[0].config_hash, "abc");
  EXPECT_EQ(loaded.cases[0].write, (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(loaded.cases[1].label, "other");
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

TEST(GateBaseline, MissingOrForeignFilesSayHowToMakeOne) {
  TempDir dir;
  const auto missing = dir.path() / "none.json";
  try {
    load_baseline(missing);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              missing.string() +
                  ": no such baseline file — take one on this machine with "
                  "`ckptbench gate RUN --baseline " +
                  missing.string() +
                  " --update-baseline` (RUN: a calibrated run of the same campaign)");
  }
  const auto other = dir.write("other.json", "{\"format\": \"x\"}");
  EXPECT_THROW(
      {
        try {
          load_baseline(other);
        } catch (const std::runtime_error& e) {
          EXPECT_NE(std::string(e.what()).find(other.string() + ": not a gate baseline"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::runtime_error);
}

TEST(GateMachineClass, ArchitectureCoresAndFileSystem) {
  const nlohmann::json env{
      {"machine", "x86_64"}, {"cores", 2}, {"file_system", "unknown (0x1234)"}, {"cpu_model", "X"}};
  EXPECT_EQ(machine_class(env, "w").name, "x86_64-2cpu-unknown-0x1234");
  EXPECT_THROW(machine_class(nlohmann::json{{"cores", 2}}, "w"), std::runtime_error);
}

}  // namespace
}  // namespace ckpt::harness
