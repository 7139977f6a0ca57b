// The MLPerf Storage rules checker on the configs/mlperf presets, and DLIO's metrics.
#include "harness/results/mlperf_rules.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/results/dlio_metrics.hpp"
#include "harness/results/workload_hash.hpp"

namespace ckpt::harness {
namespace {

// DLIO's bytes of the whole job at full size (DlioSizing.Llama8bZero3Dp8).
constexpr std::uint64_t k8bBytes = 112'425'623'552;

Case preset(const std::string& name, const std::vector<std::string>& overrides = {}) {
  const Campaign campaign =
      load_campaign(std::string(CKPT_SOURCE_DIR) + "/configs/mlperf/" + name + ".toml", overrides);
  EXPECT_EQ(campaign.cases.size(), 1u);
  EXPECT_TRUE(campaign.cases.at(0).mlperf.has_value());
  return campaign.cases.at(0);
}

// The verdict on a host of 64 GiB, in the case's own phase.
MlperfVerdict verdict(const Case& c, std::uint64_t bytes = k8bBytes) {
  return check_mlperf(
      c, *c.mlperf,
      {.phase = c.phase, .full_scale_bytes = bytes, .client_memory_bytes = 64 * kGiBBytes});
}

TEST(MlperfRules, PresetsDeclareTheRulesJobs) {
  for (const auto* name : {"llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"}) {
    const Case c = preset(name);
    const MlperfWorkload* w = mlperf_workload(c.mlperf->model);
    ASSERT_NE(w, nullptr) << name;
    EXPECT_EQ(c.model.name, w->zoo_model) << name;
    EXPECT_EQ(c.parallel.tp, w->tp) << name;
    EXPECT_EQ(c.parallel.pp, w->pp) << name;
    EXPECT_EQ(c.parallel.dp, w->dp) << name;
    EXPECT_EQ(c.parallel.zero_stage, w->zero) << name;
    EXPECT_EQ(c.iterations, 10) << name;
    EXPECT_EQ(c.warmup, 0) << name;
    EXPECT_EQ(c.io.sync, backends::SyncPolicy::fsync) << name;
    EXPECT_EQ(c.mlperf->subset, std::string(name) == "llama3-8b") << name;
    EXPECT_TRUE(verdict(c, 0).refusals.empty()) << name;
  }
  EXPECT_EQ(preset("llama3-70b").parallel.world_size(), 64);
  EXPECT_EQ(preset("llama3-405b").parallel.world_size(), 512);
  EXPECT_EQ(preset("llama3-1t").parallel.world_size(), 1024);
}

TEST(MlperfRules, AScaledPresetRunsLabelledNonCompliantWithItsReasons) {
  const MlperfVerdict v = verdict(preset("llama3-8b"));
  EXPECT_TRUE(v.refusals.empty());
  EXPECT_EQ(v.label, "non-compliant");
  EXPECT_EQ(v.reasons,
            (std::vector<std::string>{
                "model.scale = 2048: tensors 1/2048 of the workload's -- rule 4.3.3 (Table 2): "
                "\"Checkpoint size: 105 GB, 912 GB, 5.29 TB, 18 TB\"",
                "campaign.phase = \"both\" reads each checkpoint right after writing it; write 10 "
                "with --phase checkpoint, then read with --phase restore -- rule 4.7.1: \"In every "
                "submission the write phase (10 checkpoint files written) runs first, followed by "
                "the read phase (10 checkpoint files read).\""}));
}

TEST(MlperfRules, TheWorkloadItselfIsClosedOrOpenAsDeclared) {
  const std::vector<std::string> full{"model.scale=1", "campaign.phase=checkpoint"};
  const MlperfVerdict closed = verdict(preset("llama3-8b", full));
  EXPECT_TRUE(closed.reasons.empty());
  EXPECT_EQ(closed.label, "closed");
  std::vector<std::string> open = full;
  open.insert(open.end(), {"mlperf.division=open", "mlperf.subset=false", "ranks.select=all",
                           "parallel.dp=16"});
  EXPECT_EQ(verdict(preset("llama3-8b", open)).label, "open");
  // One node's share of a default-mode job is no submission.
  const MlperfVerdict share = verdict(preset("llama3-70b", full), 0);
  EXPECT_EQ(share.label, "non-compliant");
  EXPECT_EQ(share.reasons,
            (std::vector<std::string>{
                "ranks.select = \"node\": a share of the job's ranks -- rule 4.6.1: \"For CLOSED "
                "submissions, the number of MPI processes must be set to 8, 64, 512, and 1024 for "
                "the respective models.\""}));
}

TEST(MlperfRules, RefusesAnotherParallelism) {
  EXPECT_EQ(
      verdict(preset("llama3-70b", {"parallel.tp=4", "parallel.dp=16"}), 0).refusals,
      (std::vector<std::string>{
          "mlperf.model = \"llama3-70b\": parallel.tp = 4, the rules' is 8; set parallel.tp "
          "= 8 -- rule 4.3.3 (Table 2): \"The benchmark must be run with one of the four model "
          "configuration detailed below.\"",
          "mlperf.model = \"llama3-70b\": parallel.dp = 16: CLOSED runs the rules' 64 "
          "processes at dp 8; set parallel.dp = 8 or mlperf.division = \"open\" -- rule 4.6.1: "
          "\"For CLOSED submissions, the number of MPI processes must be set to 8, 64, 512, and "
          "1024 for the respective models.\""}));
}

TEST(MlperfRules, OpenMayOnlyAddDataParallelReplicas) {
  EXPECT_TRUE(verdict(preset("llama3-70b", {"mlperf.division=open", "parallel.dp=16"}), 0)
                  .refusals.empty());
  EXPECT_EQ(verdict(preset("llama3-70b", {"mlperf.division=open", "parallel.dp=4"}), 0).refusals,
            (std::vector<std::string>{
                "mlperf.model = \"llama3-70b\": parallel.dp = 4 makes 32 processes, fewer than "
                "the rules' 64; OPEN may only add data-parallel replicas: parallel.dp >= 8 -- "
                "rule 4.6.4: \"For OPEN submissions of this benchmark, the total number of "
                "processes may be increased in multiples of (TPxPP) to showcase the scalability "
                "of the storage solution.\""}));
}

TEST(MlperfRules, RefusesSubsetModeForAnyModelBut8bAndOtherProcessCounts) {
  const std::string rule =
      " -- rule 4.3.5: \"A subset run must use the \"8B\" model and a total of exactly 8 "
      "accelerators.\"";
  EXPECT_EQ(verdict(preset("llama3-70b", {"mlperf.subset=true"}), 0).refusals,
            (std::vector<std::string>{
                "mlperf.subset = true with mlperf.model = \"llama3-70b\": set mlperf.subset = "
                "false" +
                rule}));
  EXPECT_EQ(verdict(preset("llama3-8b", {"ranks.gpus_per_node=4"})).refusals,
            (std::vector<std::string>{
                "mlperf.subset = true runs one host of 8 processes, the case has ranks.select = "
                "\"node\", ranks.gpus_per_node = 4: set ranks.select = \"node\" and "
                "ranks.gpus_per_node = 8" +
                rule}));
}

TEST(MlperfRules, RefusesFewerThanFourGpusPerHost) {
  EXPECT_EQ(verdict(preset("llama3-70b", {"ranks.gpus_per_node=2"}), 0).refusals,
            (std::vector<std::string>{
                "mlperf.model = \"llama3-70b\": ranks.gpus_per_node = 2: set 4 or more -- rule "
                "4.6.4 (Table 3): \"--ppn hostname:slotcount, Number of processes per node: "
                "minimal 4\""}));
}

TEST(MlperfRules, RefusesAcceleratorMemoryBelowTheCheckpoint) {
  const Case c = preset("llama3-8b");
  const std::uint64_t held = 8 * 180 * kGiBBytes;  // 1,546,188,226,560 bytes
  EXPECT_TRUE(verdict(c, held).refusals.empty());
  EXPECT_EQ(verdict(c, held + 1).refusals,
            (std::vector<std::string>{
                "8 ranks of b200 (180 GiB each) hold 1546188226560 bytes, the checkpoint is "
                "1546188226561 bytes -- rule 4.3.4: \"The aggregate simulated accelerator memory "
                "across all nodes must be sufficient to accommodate the model's checkpoint "
                "size.\""}));
  EXPECT_EQ(accelerator_memory_bytes("mi355"), 288 * kGiBBytes);
}

TEST(MlperfRules, RefusesAnotherModel) {
  EXPECT_EQ(verdict(preset("llama3-70b", {"model.name=llama3-70b"}), 0).refusals,
            (std::vector<std::string>{
                "mlperf.model = \"llama3-70b\": model.name is llama3-70b, the workload is the "
                "zoo's mlperf-llama3-70b; set model.name = \"mlperf-llama3-70b\" -- rule 4.3.3 "
                "(Table 2): \"The benchmark must be run with one of the four model configuration "
                "detailed below.\""}));
}

TEST(MlperfRules, TheEffectivePhaseDecidesNotCampaignPhase) {
  // The presets leave campaign.phase = "both"; the two invocations override it.
  const Case c = preset("llama3-8b", {"model.scale=1"});
  const auto in_phase = [&](PhaseSelection phase) {
    return check_mlperf(
        c, *c.mlperf,
        {.phase = phase, .full_scale_bytes = k8bBytes, .client_memory_bytes = 64 * kGiBBytes});
  };
  EXPECT_EQ(in_phase(PhaseSelection::checkpoint).label, "closed");
  EXPECT_EQ(in_phase(PhaseSelection::restore).label, "closed");
  EXPECT_EQ(in_phase(PhaseSelection::both).label, "non-compliant");
}

TEST(MlperfRules, ReadingWithoutClearingTheCacheNeedsMoreThanThreeTimesClientMemory) {
  // 8B in subset mode: one host writes the whole 112,425,623,552-byte checkpoint.
  const Case c = preset("llama3-8b", {"model.scale=1", "cache.policy=none"});
  EXPECT_EQ(bytes_per_client(c, k8bBytes), k8bBytes);
  EXPECT_EQ(bytes_per_client(preset("llama3-70b"), 64), 8u);  // 64 ranks on hosts of 8
  const auto refusals = [&](PhaseSelection phase, std::uint64_t memory) {
    return check_mlperf(
               c, *c.mlperf,
               {.phase = phase, .full_scale_bytes = k8bBytes, .client_memory_bytes = memory})
        .refusals;
  };
  const std::uint64_t third = k8bBytes / 3;  // 37,475,207,850 bytes: 3 x that is just below
  EXPECT_TRUE(refusals(PhaseSelection::restore, third).empty());
  EXPECT_TRUE(refusals(PhaseSelection::checkpoint, 1024 * kGiBBytes).empty());  // no read
  EXPECT_EQ(refusals(PhaseSelection::restore, third + 1),
            (std::vector<std::string>{
                "cache.policy = \"none\": a client host of 8 ranks writes 112425623552 bytes per "
                "checkpoint, not more than 3 x its 37475207851 bytes of memory; set cache.policy "
                "= \"drop\" -- rule 4.3.1: \"The checkpoint data written per client node must be "
                "more than 3x the client node's memory capacity, otherwise the filesystem cache "
                "needs to be cleared between the write and read phases.\""}));
  EXPECT_EQ(refusals(PhaseSelection::both, 0).size(), 1u);  // memory unknown: refused
}

TEST(DlioMetrics, MeanAndPopulationStdevOfPerCheckpointRates) {
  // 2 GiB checkpoints taking 1, 2 and 4 s on process 0: 2, 1 and 0.5 GiB/s.
  const DlioMetrics m = dlio_metrics(2 * kGiBBytes, {1.0, 2.0, 4.0});
  EXPECT_EQ(m.gib_per_s, (std::vector<double>{2.0, 1.0, 0.5}));
  EXPECT_DOUBLE_EQ(m.mean_gib_per_s, 7.0 / 6.0);
  EXPECT_DOUBLE_EQ(m.stdev_gib_per_s, std::sqrt(7.0 / 18.0));
  EXPECT_DOUBLE_EQ(m.mean_seconds, 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.stdev_seconds, std::sqrt(14.0) / 3.0);
  // The aggregate of the same three checkpoints would be 6 GiB / 7 s = 0.857 GiB/s: the mean of
  // rates weighs the fast checkpoints more.
}

TEST(DlioMetrics, ADurationOfZeroHasNoRate) {
  const DlioMetrics m = dlio_metrics(kGiBBytes, {0.0, 0.5});
  EXPECT_EQ(m.gib_per_s, (std::vector<double>{2.0}));
  EXPECT_DOUBLE_EQ(m.mean_gib_per_s, 2.0);
  EXPECT_DOUBLE_EQ(m.stdev_gib_per_s, 0.0);
  EXPECT_DOUBLE_EQ(m.mean_seconds, 0.25);
  EXPECT_TRUE(dlio_metrics(kGiBBytes, {}).gib_per_s.empty());
}

TEST(MlperfRules, TheReadInvocationWithin30SecondsOfTheWriteKeepsItsLabel) {
  MlperfVerdict v{.label = "closed"};
  check_invocation_gap(v, 29.5, "2026-12-03T01:00:00.000000");
  EXPECT_EQ(v.label, "closed");
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_EQ(v.read_gap_seconds, 29.5);
  EXPECT_EQ(mlperf_json(MlperfSpec{}, v).at("write_ended_utc"), "2026-12-03T01:00:00.000000");
  EXPECT_EQ(mlperf_json(MlperfSpec{}, v).at("read_gap_seconds"), 29.5);
  check_invocation_gap(v, kMaxInvocationGapSeconds, "2026-12-03T01:00:00.000000");
  EXPECT_EQ(v.label, "closed");
}

TEST(MlperfRules, ALaterOrUnknownReadStartIsNonCompliantUnderRule471) {
  const std::string rule =
      " -- rule 4.7.1: \"In every submission the write phase (10 checkpoint files written) runs "
      "first, followed by the read phase (10 checkpoint files read).\"";
  MlperfVerdict late{.label = "closed"};
  check_invocation_gap(late, 31.5, "2026-12-03T01:00:00.000000");
  EXPECT_EQ(late.label, "non-compliant");
  EXPECT_EQ(late.reasons,
            std::vector<std::string>{
                "the read invocation started 31.5 s after the write invocation ended "
                "(2026-12-03T01:00:00.000000 UTC); the two-invocation workflow allows 30 s" +
                rule});
  MlperfVerdict unknown{.label = "open"};
  check_invocation_gap(unknown, std::nullopt, "");
  EXPECT_EQ(unknown.label, "non-compliant");
  EXPECT_EQ(unknown.reasons,
            std::vector<std::string>{
                "the read invocation found no record of the write invocation's end (run the "
                "write with --phase checkpoint by this ckptbench, into the same "
                "campaign.target): the 30 s between the two cannot be checked" +
                rule});
  const nlohmann::json j = mlperf_json(MlperfSpec{}, unknown);
  EXPECT_EQ(j.at("write_ended_utc"), nullptr);
  EXPECT_EQ(j.at("read_gap_seconds"), nullptr);
}

TEST(WorkloadHash, SameBytesHashAlikeWhateverTheTargetAndTuning) {
  const Case base = preset("llama3-70b");
  const std::string hash = workload_hash(base);
  EXPECT_EQ(hash.size(), 16u);
  for (const std::vector<std::string>& tuned :
       {std::vector<std::string>{"backend.threads=4", "backend.sync=fdatasync"},
        {"campaign.target=elsewhere", "strategy.chunk_bytes=1048576"},
        {"cache.policy=none", "campaign.iterations=3", "mlperf.division=open"}}) {
    const Case c = preset("llama3-70b", tuned);
    EXPECT_EQ(workload_hash(c), hash) << tuned.front();
    EXPECT_NE(config_hash(c), config_hash(base)) << tuned.front();
  }
  for (const char* changed :
       {"data.seed=2", "data.pattern=zeros", "model.scale=1024", "ranks.node=1",
        "strategy.layout=megatron", "state.scope=weights", "model.sizing=exact"}) {
    EXPECT_NE(workload_hash(preset("llama3-70b", {changed})), hash) << changed;
  }
}

}  // namespace
}  // namespace ckpt::harness
