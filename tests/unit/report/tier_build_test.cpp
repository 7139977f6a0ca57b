// The projection's two-level part from options and results: tiers from cases (the near one not
// bound by the storage) or numbers, and one clear refusal for each kind of nonsense.
#include "harness/report/tier_build.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "harness/results/schema_version.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

// One case: 1 GiB written in 2 s and read in 1 s on one host, a world of 64 ranks on 8 GPUs a
// node (8 nodes: every time × 8 at full scale), 64 GiB at full scale.
RunRecord tier_run_of(const std::string& name,
                      const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json j{
      {"schema_version", kResultsSchemaVersion},
      {"case", nlohmann::json::object()},
      {"status", "ok"},
      {"bytes_per_checkpoint", std::uint64_t{1} << 30},
      {"full_scale_bytes_per_checkpoint", std::uint64_t{64} << 30},
      {"world_size", 64},
      {"config", {{"ranks", {{"gpus_per_node", 8}}}, {"backend", {{"name", "posix"}}}}},
      {"environment", {{"hosts", {"a"}}}},
      {"samples", {{"write_seconds", {2.0}}, {"read_seconds", {1.0}}}}};
  j.update(extra);
  RunRecord run;
  run.name = name;
  run.file = name + "/results.jsonl";
  run.cases.push_back(parse_case(j, {.file = run.file, .line = 1}));
  run.cases.back().file = run.file;
  run.cases.back().line = 1;
  run.cases.back().run = name;
  return run;
}

// The near tier as an async case: a 0.5 s stall, durable after 3 s, steps of 10 s.
RunRecord async_run(const std::string& name) {
  return tier_run_of(
      name, {{"training",
              {{"engine", "async"}, {"stall_seconds", 0.5}, {"time_to_durable_seconds", 3.0}}},
             {"config",
              {{"ranks", {{"gpus_per_node", 8}}},
               {"backend", {{"name", "posix"}}},
               {"training", {{"iteration_seconds", 10}}}}}});
}

ProjectionOptions given_tiers() {
  ProjectionOptions o;
  o.mtbf_hours = 10;
  o.tiers.near = "stall=2,restore=30";
  o.tiers.far = "stall=8,durable=20,restore=300";
  o.tiers.step_seconds = 10;
  o.tiers.near_recoverable = 0.75;
  o.tiers.trials = 20;
  return o;
}

TEST(TierBuild, NumbersGiveTheModelsBest) {
  const ProjectionModel m = build_projection({tier_run_of("r")}, given_tiers());
  ASSERT_TRUE(m.tiers);
  const TierProjection& t = *m.tiers;
  EXPECT_EQ(t.near.name, "given");
  EXPECT_DOUBLE_EQ(t.near.cost.durable, 2);  // the stall when not given
  EXPECT_DOUBLE_EQ(t.inputs.mtbf_seconds, 36000);
  // The brute-force optimum of tier_model_test's small job: (43, 3) at 97.906%; the far tier
  // alone: every 75 steps at 97.045%.
  EXPECT_EQ(t.best.k, 43);
  EXPECT_EQ(t.best.far_every, 3);
  EXPECT_NEAR(t.best.point.goodput, 0.9790589495, 1e-9);
  EXPECT_EQ(t.far_only.k, 75);
  EXPECT_EQ(t.far_only.far_every, 1);
  EXPECT_NEAR(t.far_only.point.goodput, 0.9704540457, 1e-9);
  EXPECT_EQ(t.simulated.trials, 20);
  EXPECT_GT(t.simulated.mean, t.simulated_far_only.mean);
}

TEST(TierBuild, CasesProjectedTheNearOneUnboundByTheStorage) {
  ProjectionOptions o = given_tiers();
  o.tiers.near = "run=local";
  o.tiers.far = "run=remote";
  o.tiers.step_seconds.reset();  // from the near case's loop: 10 s
  o.storage_gib_per_s = 1;       // 64 GiB / 1 GiB/s = 64 s at least, for the far tier only
  const ProjectionModel m = build_projection({async_run("local"), tier_run_of("remote")}, o);
  const TierProjection& t = *m.tiers;
  EXPECT_EQ(t.near.name, "local: -");
  EXPECT_EQ(t.near.engine, "async");
  EXPECT_DOUBLE_EQ(t.near.cost.stall, 4);     // 0.5 s × 8
  EXPECT_DOUBLE_EQ(t.near.cost.durable, 24);  // 3 s × 8, not bound
  EXPECT_DOUBLE_EQ(t.near.cost.restore, 8);   // 1 s × 8, not bound
  EXPECT_DOUBLE_EQ(t.far.cost.stall, 64);     // 2 s × 8 = 16 s, bound to 64 s
  EXPECT_DOUBLE_EQ(t.far.cost.restore, 64);
  EXPECT_DOUBLE_EQ(t.inputs.step_seconds, 10);
  EXPECT_EQ(t.step_rule, "training.iteration_seconds of the near tier's case");
  EXPECT_GE(static_cast<double>(t.best.k) * 10, 24);  // feasible: durable before the next
}

void expect_refused(const ProjectionOptions& o, const std::vector<RunRecord>& runs,
                    const std::string& message) {
  try {
    build_projection(runs, o);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(TierBuild, NonsenseIsRefusedWithTheFix) {
  const std::vector<RunRecord> runs{tier_run_of("r")};
  const auto with = [](auto change) {
    ProjectionOptions o = given_tiers();
    change(o);
    return o;
  };
  expect_refused(with([](auto& o) { o.tiers.far.clear(); }), runs,
                 "two-level intervals need both tiers, --far-tier is missing");
  expect_refused(with([](auto& o) { o.tiers.near = "stall=nan,restore=1"; }), runs,
                 "--near-tier: stall=nan must be a number of seconds from 0 to 1e+09");
  expect_refused(with([](auto& o) { o.tiers.far = "stall=1,restore=-3"; }), runs,
                 "--far-tier: restore=-3 must be a number of seconds from 0 to 1e+09");
  expect_refused(with([](auto& o) { o.tiers.far = "stall=1"; }), runs,
                 "--far-tier stall=1: give stall=S and restore=S");
  expect_refused(with([](auto& o) { o.tiers.far = "stall=10,durable=5,restore=1"; }), runs,
                 "durable=5 is below stall=10");
  expect_refused(with([](auto& o) { o.tiers.near = "run=r,stall=1"; }), runs,
                 "either KEY=VALUE pairs picking a case or stall=S,durable=S,restore=S, not both");
  expect_refused(with([](auto& o) { o.tiers.near = "run=nope"; }), runs,
                 "--near-tier run=nope matches no case of the runs (cases: r: -)");
  expect_refused(with([](auto& o) { o.tiers.near = "backend.name=posix"; }),
                 {tier_run_of("a"), tier_run_of("b")},
                 "--near-tier backend.name=posix matches 2 cases (a: -; b: -): add KEY=VALUE");
  expect_refused(with([](auto& o) { o.tiers.near_recoverable.reset(); }), runs,
                 "two tiers need --near-recoverable P");
  expect_refused(with([](auto& o) { o.tiers.near_recoverable = 1.5; }), runs,
                 "--near-recoverable must be from 0 to 1 (got 1.5)");
  expect_refused(with([](auto& o) { o.tiers.step_seconds.reset(); }), runs,
                 "give --step-seconds S (one training step's time, the unit of k): the near tier "
                 "given as numbers has no training loop");
  expect_refused(with([](auto& o) { o.tiers.trials = 0; }), runs,
                 "--mc-trials must be from 1 to 100000 (got 0)");
  expect_refused(with([](auto& o) {
                   o.mtbf_hours.reset();
                   o.mtbf_preset = "llama3-16k";
                 }),
                 runs, "--mtbf-preset scales with the job's GPUs, which tiers given as numbers");
}

TEST(TierBuild, FailureTraceGivesMAndIsCheckedLineByLine) {
  test_support::TempDir dir;
  const auto write = [&](const std::string& text) { return dir.write("trace.txt", text).string(); };
  ProjectionOptions o = given_tiers();
  o.mtbf_hours.reset();
  o.tiers.job_days = 1;
  o.tiers.failure_trace = write("# hours\n1.5\n\n12  # a node\n20\n");
  const ProjectionModel m = build_projection({tier_run_of("r")}, o);
  EXPECT_DOUBLE_EQ(m.tiers->inputs.mtbf_seconds, 8 * 3600);  // 24 h / 3 failures
  EXPECT_EQ(m.tiers->setup.trace, (std::vector<double>{5400, 43200, 72000}));
  EXPECT_EQ(m.tiers->simulated.failures, 3);
  o.tiers.failure_trace = write("1\nsoon\n");
  expect_refused(o, {tier_run_of("r")}, ":2: `soon` is not a failure time");
  o.tiers.failure_trace = write("25\n");
  expect_refused(o, {tier_run_of("r")},
                 ":1: `25` is not a failure time: one number of hours from 0 "
                 "to below the job's end (24 h, --job-days 1)");
  o.tiers.failure_trace = write("# none\n");
  expect_refused(o, {tier_run_of("r")}, ": no failure times in it");
  o.mtbf_hours = 3;
  expect_refused(o, {tier_run_of("r")}, "give the failure rate once");
}

}  // namespace
}  // namespace ckpt::harness
