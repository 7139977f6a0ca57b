// `project`'s arithmetic against hand-computed values, and its refusals of nonsensical input.
#include "harness/report/projection.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "harness/report/projection_formulas.hpp"
#include "harness/results/schema_version.hpp"

namespace ckpt::harness {
namespace {

TEST(ProjectionFormulas, YoungAndDalyByHand) {
  // C = 100 s, M = 10,000 s: Young = √(2·100·10000) = √2,000,000 = 1414.2136 s.
  EXPECT_NEAR(young_interval(100, 10000), 1414.2136, 1e-4);
  // Daly: C/2M = 0.005, √0.005 = 0.0707107; 1 + 0.0707107/3 + 0.005/9 = 1.0241258;
  // 1414.2136 × 1.0241258 − 100 = 1348.3326 s.
  EXPECT_NEAR(daly_interval(100, 10000), 1348.3326, 1e-3);
  // C ≥ 2M: Daly's interval is M.
  EXPECT_DOUBLE_EQ(daly_interval(30000, 10000), 10000);
  EXPECT_DOUBLE_EQ(daly_interval(20000, 10000), 10000);
}

TEST(ProjectionFormulas, WasteByHand) {
  // τ = 1000 s, C = 100 s, R = 50 s, M = 10,000 s: 100/1000 + (500 + 50)/10000 = 0.1 + 0.055 =
  // 0.155.
  EXPECT_DOUBLE_EQ(expected_waste(1000, 100, 50, 10000), 0.155);
  // Young's interval minimises C/τ + τ/2M: waste there below waste at half and double of it.
  const double tau = young_interval(100, 10000);
  EXPECT_LT(expected_waste(tau, 100, 50, 10000), expected_waste(tau / 2, 100, 50, 10000));
  EXPECT_LT(expected_waste(tau, 100, 50, 10000), expected_waste(tau * 2, 100, 50, 10000));
}

TEST(ProjectionFormulas, Llama3PresetScalesWithTheGpuCount) {
  // 54 days × 24 h / 419 interruptions = 1296/419 = 3.0930788 h on 16,384 GPUs.
  EXPECT_NEAR(preset_mtbf_hours(kLlama3Preset, 16384), 3.0930788, 1e-6);
  // 1,024 GPUs: 16× fewer GPUs, 16× the MTBF = 49.489260 h.
  EXPECT_NEAR(preset_mtbf_hours(kLlama3Preset, 1024), 49.489260, 1e-5);
}

// A run of one case: 1 GiB written in 2 s, read in 1 s (medians), one host, world of 64 ranks
// of which it emulated some, 8 GPUs per node, 64 GiB at full scale.
RunRecord one_case_run(const nlohmann::json& extra = nlohmann::json::object()) {
  nlohmann::json j{{"schema_version", kResultsSchemaVersion},
                   {"case", nlohmann::json::object()},
                   {"status", "ok"},
                   {"bytes_per_checkpoint", std::uint64_t{1} << 30},
                   {"full_scale_bytes_per_checkpoint", std::uint64_t{64} << 30},
                   {"world_size", 64},
                   {"config", {{"ranks", {{"gpus_per_node", 8}}}}},
                   {"environment", {{"hosts", {"a"}}}},
                   {"samples", {{"write_seconds", {3.0, 2.0, 1.0}}, {"read_seconds", {1.0}}}}};
  j.update(extra);
  RunRecord run;
  run.name = "r";
  run.file = "r/results.jsonl";
  run.cases.push_back(parse_case(j, {.file = "r/results.jsonl", .line = 1}));
  run.cases.back().file = run.file;
  run.cases.back().line = 1;
  return run;
}

TEST(Projection, SyncCaseByHand) {
  // Nodes = 64 / 8 = 8; per node 64 GiB / 8 = 8 GiB at full scale against 1 GiB measured: ×8.
  // C = 2 s × 8 = 16 s (storage uncapped), R = 1 s × 8 = 8 s; M = 10 h = 36,000 s.
  // Young = √(2·16·36000) = √1,152,000 = 1073.3126 s; Daly: C/2M = 16/72000 = 2.2222e-4,
  // √ = 0.0149071; 1073.3126 × (1 + 0.0049690 + 0.0000247) − 16 = 1062.6725 s.
  // Waste = 16/1062.673 + (531.3365 + 8)/36000 = 0.0150563 + 0.0149816 = 0.0300379.
  const ProjectionModel m = build_projection({one_case_run()}, {.mtbf_hours = 10.0});
  ASSERT_EQ(m.cases.size(), 1u);
  const CaseProjection& p = m.cases[0];
  EXPECT_EQ(p.nodes, 8);
  EXPECT_EQ(p.gpus, 64);
  EXPECT_DOUBLE_EQ(p.node_scale, 8);
  EXPECT_DOUBLE_EQ(p.checkpoint_seconds, 16);
  EXPECT_DOUBLE_EQ(p.restore_seconds, 8);
  EXPECT_DOUBLE_EQ(p.node_write_gib_s, 0.5);
  EXPECT_NEAR(p.young_seconds, 1073.3126, 1e-3);
  EXPECT_NEAR(p.daly_seconds, 1062.6725, 1e-3);
  EXPECT_DOUBLE_EQ(p.interval_seconds, p.daly_seconds);
  EXPECT_NEAR(p.waste, 0.0300379, 1e-6);
  EXPECT_FALSE(p.write_capped);
}

TEST(Projection, StorageBandwidthBoundsTheFullScaleTimes) {
  // 8 nodes × 0.5 GiB/s = 4 GiB/s measured aggregate; storage 2 GiB/s: C = 64 GiB / 2 = 32 s.
  // Reads: 8 × 1 GiB/s = 8 GiB/s, also capped: R = 32 s.
  const ProjectionModel m =
      build_projection({one_case_run()}, {.storage_gib_per_s = 2.0, .mtbf_hours = 10.0});
  EXPECT_DOUBLE_EQ(m.cases[0].checkpoint_seconds, 32);
  EXPECT_DOUBLE_EQ(m.cases[0].restore_seconds, 32);
  EXPECT_TRUE(m.cases[0].write_capped);
  EXPECT_TRUE(m.cases[0].read_capped);
}

TEST(Projection, AsyncIntervalIsNoShorterThanTheTimeToDurable) {
  // Stall 0.01 s × 8 = 0.08 s; durable 50 s × 8 = 400 s. M = 1 h = 3600 s:
  // Young = √(2·0.08·3600) = √576 = 24 s; Daly < 24 s; the interval is the 400 s to durable.
  // Waste = 0.08/400 + (200 + 8)/3600 = 0.0002 + 0.0577778 = 0.0579778.
  const RunRecord run = one_case_run(
      {{"samples", {{"read_seconds", {1.0}}}},
       {"training",
        {{"engine", "async"}, {"stall_seconds", 0.01}, {"time_to_durable_seconds", 50.0}}}});
  const ProjectionModel m = build_projection({run}, {.mtbf_hours = 1.0});
  const CaseProjection& p = m.cases[0];
  EXPECT_EQ(p.engine, "async");
  EXPECT_DOUBLE_EQ(p.checkpoint_seconds, 0.08);
  EXPECT_DOUBLE_EQ(p.durable_seconds, 400);
  EXPECT_NEAR(p.young_seconds, 24, 1e-9);
  EXPECT_DOUBLE_EQ(p.interval_seconds, 400);
  EXPECT_NEAR(p.waste, 0.0579778, 1e-6);
}

TEST(Projection, PresetAndNodesOverride) {
  // --nodes 2048 × 8 GPUs per node = 16,384 GPUs: the preset's own 3.0930788 h.
  const ProjectionModel m =
      build_projection({one_case_run()}, {.nodes = 2048, .mtbf_preset = "llama3-16k"});
  EXPECT_EQ(m.cases[0].gpus, 16384);
  EXPECT_NEAR(m.cases[0].mtbf_seconds, 3.0930788 * 3600, 1e-2);
  // 64 GiB over 2048 nodes = 32 MiB per node against 1 GiB measured: ×1/32; C = 2/32 s.
  EXPECT_DOUBLE_EQ(m.cases[0].checkpoint_seconds, 0.0625);
}

std::string error_of(const std::vector<RunRecord>& runs, const ProjectionOptions& o) {
  try {
    build_projection(runs, o);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Projection, NonsensicalOptionsAndMissingFieldsAreRefusedWithTheFix) {
  const RunRecord run = one_case_run();
  EXPECT_EQ(error_of({run}, {.mtbf_hours = 0.0}),
            "--mtbf-hours must be a number of hours from 0.01 to 1000000 (got 0)");
  EXPECT_EQ(error_of({run}, {.storage_gib_per_s = -1.0, .mtbf_hours = 1.0}),
            "--storage-gib-per-s must be a number of GiB/s from 1e-06 to 1000000000 (got -1)");
  EXPECT_EQ(error_of({run}, {.nodes = 0, .mtbf_hours = 1.0}),
            "--nodes must be from 1 to 1,000,000 (got 0)");
  EXPECT_NE(error_of({run}, {}).find("project needs the job's mean time between failures: "
                                     "--mtbf-hours H, or --mtbf-preset llama3-16k"),
            std::string::npos);
  EXPECT_NE(error_of({run}, {.mtbf_hours = 1.0, .mtbf_preset = "llama3-16k"})
                .find("give the failure rate once: --mtbf-hours, --mtbf-preset or --failure-trace"),
            std::string::npos);
  EXPECT_EQ(error_of({run}, {.mtbf_preset = "llama2"}),
            "unknown --mtbf-preset `llama2` (presets: llama3-16k)");
  RunRecord old = run;
  old.cases[0].full_scale_bytes.reset();
  EXPECT_EQ(error_of({old}, {.mtbf_hours = 1.0}),
            "r/results.jsonl:1: case 0 has no `full_scale_bytes_per_checkpoint`: results of a "
            "ckptbench from before "
            "`project`; run the campaign again");
  RunRecord unread = run;
  unread.cases[0].read.seconds.clear();
  EXPECT_EQ(error_of({unread}, {.mtbf_hours = 1.0}),
            "r/results.jsonl:1: case 0 has no restore time (`samples.read_seconds`): run it with "
            "campaign.phase = \"both\"");
}

}  // namespace
}  // namespace ckpt::harness
