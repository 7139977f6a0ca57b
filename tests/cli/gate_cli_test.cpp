// `ckptbench gate` as CI runs it: exit 0 / 1 / 2 on hand-made runs (unchanged, regressed,
// missing baseline, run without calibration, baseline of another machine class, bad options),
// --update-baseline's file (and --pool's), and a real calibrated campaign (one process, and two
// under mpirun) gated against its own baseline.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/results/schema_version.hpp"
#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// A run of one 1 GiB case: write seconds `write` (calibration 1 GiB/s around each), reads 0.5 s.
std::string gate_run_line(const std::vector<double>& write, bool calibrated,
                          const std::string& cores = "2", const std::string& campaign = "ci-gate",
                          const std::string& hash = "abc") {
  std::vector<double> read(write.size(), 0.5), calibration(write.size() + 1, 1.0);
  nlohmann::json j{{"schema_version", harness::kResultsSchemaVersion},
                   {"campaign", campaign},
                   {"case", nlohmann::json::object()},
                   {"case_index", 0},
                   {"status", "ok"},
                   {"bytes_per_checkpoint", kGiB},
                   {"config_hash", hash},
                   {"config", {{"campaign", {{"name", campaign}}}}},
                   {"samples", {{"write_seconds", write}, {"read_seconds", read}}},
                   {"environment",
                    {{"machine", "x86_64"},
                     {"cores", std::stoi(cores)},
                     {"file_system", "ext4"},
                     {"cpu_model", "EPYC"},
                     {"memory_bytes", kGiB},
                     {"time_utc", "2026-12-01T17:00:00Z"}}}};
  j["calibration"] = calibrated ? nlohmann::json{{"bytes", kGiB},
                                                 {"write_gib_per_s", calibration},
                                                 {"read_gib_per_s", calibration}}
                                : nlohmann::json(nullptr);
  return j.dump() + "\n";
}

const std::vector<double> kSteady{1.00, 0.97, 1.03, 0.99, 1.01, 0.96, 1.04, 1.00};

std::vector<double> slower(double factor) {
  std::vector<double> out;
  for (double s : kSteady) out.push_back(s * factor);
  return out;
}

class GateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const Outcome o =
        ckptbench({"gate", base_.string(), "--baseline", baseline_.string(), "--update-baseline"});
    ASSERT_EQ(o.exit_code, 0) << o.describe();
    ASSERT_TRUE(contains(o.out, "baseline " + baseline_.string() +
                                    " written: 1 cases, machine class x86_64-2cpu-ext4"))
        << o.out;
  }
  Scratch dir_;
  fs::path base_ = dir_.write("base/results.jsonl", gate_run_line(kSteady, true)).parent_path();
  fs::path baseline_ = dir_ / "baselines" / "ci-gate-x86_64-2cpu-ext4.json";
};

TEST_F(GateCli, UpdateBaselineWritesTheRatiosAndTheMachineClass) {
  const nlohmann::json j = nlohmann::json::parse(read_text(baseline_));
  EXPECT_EQ(j["format"], "ckptbench-gate-baseline");
  EXPECT_EQ(j["machine_class"]["name"], "x86_64-2cpu-ext4");
  EXPECT_EQ(j["machine_class"]["cpu_model"], "EPYC");
  EXPECT_EQ(j["cases"][0]["read_ratios"], nlohmann::json(std::vector<double>(8, 2.0)));
  const Outcome again =
      ckptbench({"gate", base_.string(), "--baseline", baseline_.string(), "--update-baseline"});
  EXPECT_TRUE(contains(again.out, "updated: 1 cases")) << again.describe();
}

TEST_F(GateCli, PoolAddsRunsAndATooWideSpreadIsNoted) {
  // Two more runs: write medians 1.0 (base), 1/1.25 = 0.8 and 1/0.8 = 1.25: the logs' standard
  // deviation is ln 1.25 = 22.3 %, so the smallest detectable change 1 − exp(−4 × 22.3 % × √(4/3))
  // is 64.3 % — this baseline cannot gate the 10 % tolerance.
  const fs::path slow =
      dir_.write("slow/results.jsonl", gate_run_line(slower(1.25), true)).parent_path();
  const fs::path fast =
      dir_.write("fast/results.jsonl", gate_run_line(slower(0.8), true)).parent_path();
  Outcome o = ckptbench(
      {"gate", slow.string(), "--baseline", baseline_.string(), "--update-baseline", "--pool"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "pooled: 1 cases")) << o.out;
  o = ckptbench(
      {"gate", fast.string(), "--baseline", baseline_.string(), "--update-baseline", "--pool"});
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const nlohmann::json j = nlohmann::json::parse(read_text(baseline_));
  EXPECT_EQ(j["cases"][0]["write_runs"], nlohmann::json({8, 8, 8}));
  EXPECT_EQ(j["cases"][0]["write_ratios"].size(), 24u);
  // Its read row still sees 10 %, so the case is gated; the write row, which cannot, is gated at
  // its own 64.3 % and says so.
  o = ckptbench({"gate", slow.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out,
                       "note: case - write: its 3 runs' median ratios spread 22.3 % "
                       "(standard deviation of their logs), so this row detects only "
                       "changes over 64.3 % and is gated at that; the case's other rows "
                       "gate the 10.0 % tolerance\n"))
      << o.out;
  // Gated at the tolerance it can detect, the 20 % drop is within its noise.
  o = ckptbench({"gate", slow.string(), "--baseline", baseline_.string(), "--tolerance", "0.65"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(o.out, "n=24 (3 runs)")) << o.out;
  EXPECT_TRUE(contains(o.out, "22.3 / 1.3 %")) << o.out;  // spread base / run
  o = ckptbench({"gate", slow.string(), "--baseline", baseline_.string(), "--pool"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "--pool requires --update-baseline")) << o.err;
}

TEST_F(GateCli, EachRowStatesTheSmallestChangeItCouldDetect) {
  // write: the median's standard error 1.30 % (from its 8 iterations, the baseline the same run),
  // σ = √2 × 1.30 %, 1 − exp(−4 σ) = 7.1 %; read: all eight ratios 2.0, nothing to detect but
  // the tolerance; write+read: half the write's log spread, 3.6 %.
  const Outcome o = ckptbench({"gate", base_.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(
      o.out,
      "smallest detectable change in this run: - write 7.1 %, - read 0.0 %, - write+read 3.6 %\n"))
      << o.out;
  EXPECT_TRUE(contains(o.out, "1.3* / 1.3 %")) << o.out;
}

TEST_F(GateCli, NonFiniteOrOutOfRangeOptionsAreRefusedNamingThem) {
  for (const std::vector<std::string>& option :
       std::vector<std::vector<std::string>>{{"--tolerance", "nan"},
                                             {"--tolerance", "inf"},
                                             {"--tolerance", "-0.1"},
                                             {"--alpha", "nan"},
                                             {"--spread-factor", "inf"}}) {
    const Outcome o =
        ckptbench({"gate", base_.string(), "--baseline", baseline_.string(), option[0], option[1]});
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.err, option[0])) << o.err;
    EXPECT_TRUE(contains(o.err, "`" + option[1] + "` is not a number from ")) << o.err;
  }
}

TEST_F(GateCli, HostileBaselinesAreRefusedNotLoopedOn) {
  // A negative write ratio would make the write+read row's √(write × read) NaN, whose ranking never
  // ends.
  nlohmann::json j = nlohmann::json::parse(read_text(baseline_));
  j["cases"][0]["write_ratios"][3] = -1.0;
  const fs::path hostile = dir_.write("hostile.json", j.dump());
  const Outcome o = ckptbench({"gate", base_.string(), "--baseline", hostile.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_EQ(o.err, "ckptbench: error: " + hostile.string() +
                       ": cases[0]: `write_ratios[3]` is -1.0, not a positive finite number — take "
                       "the baseline again "
                       "with --update-baseline\n");
}

TEST_F(GateCli, AnotherCampaignOrConfigurationIsRefusedUnlessAllowed) {
  const fs::path nightly =
      dir_.write("nightly/results.jsonl", gate_run_line(kSteady, true, "2", "nightly", "abc"))
          .parent_path();
  Outcome o = ckptbench({"gate", nightly.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err, "a baseline of campaign `ci-gate`, the run (" + (nightly / "results.jsonl").string() +
                 ") is of `nightly` — another campaign's ratios are not gated against it"))
      << o.err;
  o = ckptbench(
      {"gate", nightly.string(), "--baseline", baseline_.string(), "--update-baseline", "--pool"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(
      contains(o.err, "is of `nightly` — another campaign's ratios are not written into it"))
      << o.err;
  EXPECT_EQ(nlohmann::json::parse(read_text(baseline_))["cases"][0]["write_ratios"].size(),
            8u);  // untouched

  const fs::path changed =
      dir_.write("changed/results.jsonl", gate_run_line(slower(1.25), true, "2", "ci-gate", "def"))
          .parent_path();
  o = ckptbench({"gate", changed.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(
      o.err,
      "case - was taken with config_hash abc, the run (" + (changed / "results.jsonl").string() +
          ") has def — another configuration is another workload and is not gated against it"))
      << o.err;
  o = ckptbench(
      {"gate", changed.string(), "--baseline", baseline_.string(), "--allow-other-workload"});
  EXPECT_EQ(o.exit_code, 1) << o.describe();  // a deliberate 20 % slowdown, gated as told
  EXPECT_TRUE(contains(
      o.out, "another configuration (config_hash), gated as told (--allow-other-workload): -\n"))
      << o.out;
}

TEST_F(GateCli, UnchangedPassesWithExitZero) {
  const Outcome o = ckptbench({"gate", base_.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_TRUE(contains(
      o.out,
      "write       1.000 [0.962–1.042] n=8  1.000 [0.962–1.042] n=8  +0.0 %       1.3* / 1.3 %  "
      "     7.1 %     10.0 %  1.000  passed"))
      << o.out;
  // write+read: each iteration's √(write ratio × read ratio 2).
  EXPECT_TRUE(contains(
      o.out,
      "write+read  1.414 [1.387–1.443] n=8  1.414 [1.387–1.443] n=8  +0.0 %       0.7* / 0.7 %  "
      "     3.6 %     10.0 %  1.000  passed"))
      << o.out;
  EXPECT_TRUE(contains(o.out, "gate: passed")) << o.out;
}

TEST_F(GateCli, RegressionBeyondToleranceExitsOne) {
  const fs::path now =
      dir_.write("slow/results.jsonl", gate_run_line(slower(1.25), true)).parent_path();
  const Outcome o = ckptbench({"gate", now.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 1) << o.describe();
  EXPECT_TRUE(contains(o.out, "-20.0 %")) << o.out;
  EXPECT_TRUE(contains(o.out, "regressed")) << o.out;
  // write −20 %, write+read √0.8 − 1 = −10.6 %: both beyond the 10 % tolerance.
  EXPECT_TRUE(contains(o.out, "write+read")) << o.out;
  EXPECT_TRUE(contains(o.out, "-10.6 %")) << o.out;
  EXPECT_TRUE(contains(o.out, "gate: 2 regressed")) << o.out;
  // The same run passes with a tolerance above its 20 % drop.
  EXPECT_EQ(
      ckptbench({"gate", now.string(), "--baseline", baseline_.string(), "--tolerance", "0.25"})
          .exit_code,
      0);
}

TEST_F(GateCli, BadInputExitsTwoNamingTheFileAndTheFix) {
  const fs::path missing = dir_ / "none.json";
  Outcome o = ckptbench({"gate", base_.string(), "--baseline", missing.string()});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(
      contains(o.err, missing.string() + ": no such baseline file — take one on this machine with"))
      << o.err;

  const fs::path plain =
      dir_.write("plain/results.jsonl", gate_run_line(kSteady, false)).parent_path();
  o = ckptbench({"gate", plain.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(
      contains(o.err, (plain / "results.jsonl").string() + ":1: case 0 (-) has no calibration"))
      << o.err;
  EXPECT_TRUE(contains(o.err, "--set measure.calibration=true")) << o.err;

  const fs::path other =
      dir_.write("other/results.jsonl", gate_run_line(kSteady, true, "16")).parent_path();
  o = ckptbench({"gate", other.string(), "--baseline", baseline_.string()});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(
      contains(o.err, "taken on machine class x86_64-2cpu-ext4, the run on x86_64-16cpu-ext4"))
      << o.err;

  o = ckptbench({"gate", base_.string(), "--update-baseline"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(contains(o.err, "--update-baseline requires --baseline")) << o.err;
  o = ckptbench({"gate", base_.string(), "--baseline", baseline_.string(), "--tolerance", "2"});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
}

TEST_F(GateCli, MachineClassPrintsTheBaselineName) {
  const Outcome o = ckptbench({"gate", base_.string(), "--machine-class"});
  EXPECT_EQ(o.exit_code, 0) << o.describe();
  EXPECT_EQ(o.out, "x86_64-2cpu-ext4\n");
}

// A calibrated campaign of the tiny model: six timed iterations after one warm-up.
std::string calibrated_campaign(const fs::path& target, const fs::path& model) {
  return campaign_toml("gated", target,
                       "create_target = true\niterations = 6\nwarmup = 1\n[model]\nname = \"" +
                           model.string() +
                           "\"\n[parallel]\ndp = 2\nzero = 1\n[cache]\npolicy = "
                           "\"fadvise\"\n[measure]\ncalibration = true\n");
}

void expect_calibration_record(const fs::path& run) {
  const std::string text = read_text(run / "results.jsonl");
  const nlohmann::json j = nlohmann::json::parse(text.substr(0, text.find('\n')));
  ASSERT_TRUE(j["calibration"].is_object()) << j.dump(2);
  EXPECT_EQ(j["calibration"]["bytes"], j["bytes_per_checkpoint"]);
  EXPECT_EQ(j["calibration"]["write_gib_per_s"].size(),
            7u);  // around each of the 6 timed iterations
  EXPECT_EQ(j["calibration"]["read_gib_per_s"].size(), 7u);
  for (const auto& rate : j["calibration"]["write_gib_per_s"]) EXPECT_GT(rate.get<double>(), 0);
  EXPECT_TRUE(j["wall_time"]["parts"].contains("calibration")) << j["wall_time"].dump();
  EXPECT_TRUE(j["environment"].contains("cpu_model"));
}

TEST(GateRun, CalibratedCampaignPassesAgainstItsOwnBaseline) {
  Scratch dir;
  const fs::path campaign =
      dir.write("c.toml", calibrated_campaign(dir / "target", dir.write("tiny.toml", kTinyModel)));
  const Outcome run =
      ckptbench({"-q", "run", campaign.string(), "--output", (dir / "out").string()});
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  const fs::path result = run_directory(dir / "out");
  expect_calibration_record(result);
  EXPECT_FALSE(fs::exists(dir / "target" / "gated" / "case-0000" / "calibration"))
      << "calibration files left behind";
  const fs::path baseline = dir / "baseline.json";
  ASSERT_EQ(
      ckptbench({"gate", result.string(), "--baseline", baseline.string(), "--update-baseline"})
          .exit_code,
      0);
  // Six iterations of a tiny model on a shared machine cannot detect 10 %: the point here is the
  // path from a real run to a verdict, so the tolerance is one no baseline can be too spread for.
  const Outcome gate =
      ckptbench({"gate", result.string(), "--baseline", baseline.string(), "--tolerance", "1"});
  EXPECT_EQ(gate.exit_code, 0) << gate.describe();
  EXPECT_TRUE(contains(gate.out, "gate: passed")) << gate.out;
  EXPECT_FALSE(contains(gate.out, "insufficient")) << gate.out;
}

TEST(GateRun, CalibrationUnderMpirunCoversEveryProcessBytes) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const auto mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign =
      dir.write("c.toml", calibrated_campaign(dir / "target", dir.write("tiny.toml", kTinyModel)));
  std::vector<std::string> args = mpirun_args(*mpirun, 2);
  args.insert(args.end(),
              {kBinary, "-q", "run", campaign.string(), "--output", (dir / "out").string()});
  const Outcome run = run_process(args);
  ASSERT_EQ(run.exit_code, 0) << run.describe();
  expect_calibration_record(run_directory(dir / "out"));
}

TEST(GateRun, CalibrationRefusesATrainingLoop) {
  Scratch dir;
  const fs::path campaign =
      dir.write("c.toml", calibrated_campaign(dir / "target", dir.write("tiny.toml", kTinyModel)) +
                              "[training]\niterations = 2\niteration_seconds = 0.01\n");
  const Outcome o =
      ckptbench({"run", campaign.string(), "--dry-run", "--output", (dir / "out").string()});
  EXPECT_EQ(o.exit_code, 2) << o.describe();
  EXPECT_TRUE(contains(o.err, "measure.calibration")) << o.err;
  EXPECT_TRUE(contains(o.err, "not a [training] loop")) << o.err;
}

}  // namespace
}  // namespace ckpt::integration
