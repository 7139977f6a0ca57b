// The deepspeed layout under ZeRO-3 against the checkpoints DeepSpeed 0.19.8 saved for tiny
// Llama-shaped models at DP 1, 2 and 4 (tests/data/deepspeed/zero3_files.jsonl, written by
// measure_zero3.py beside it): the same files, DeepSpeed's flat partition and every file's size.
#include "harness/plan/deepspeed_zero3.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "harness/cli/layout_files.hpp"
#include "harness/cli/run_checks.hpp"
#include "harness/models/model_file.hpp"
#include "tests/unit/deepspeed_saves.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

using testing::layout_of;
using testing::listed_files;
using testing::MeasuredSave;
using testing::name_of;

std::vector<MeasuredSave> zero3_saves() {
  return testing::measured_saves("zero3_files.jsonl");
}

TEST(DeepSpeedZero3, TheFixtureHoldsEveryMeasuredShapeAtDp1To4) {
  const std::vector<MeasuredSave> saves = zero3_saves();
  ASSERT_EQ(saves.size(), 18u);  // 6 shapes × DP 1, 2, 4
  std::set<std::int64_t> dps;
  for (const MeasuredSave& save : saves) dps.insert(save.dp);
  EXPECT_EQ(dps, (std::set<std::int64_t>{1, 2, 4}));
}

TEST(DeepSpeedZero3, WritesTheFilesDeepSpeedWrites) {
  for (const MeasuredSave& save : zero3_saves()) {
    std::set<std::string> measured, listed;
    for (const auto& [path, row] : save.files) measured.insert(path);
    for (const auto& [path, file] : listed_files(save)) listed.insert(path);
    EXPECT_EQ(listed, measured) << name_of(save);
    // Process 0 writes latest and the recovery scripts; every rank its two files.
    const auto files = listed_files(save);
    EXPECT_EQ(files.at("../zero_to_fp32.py").rank, 0);
    for (std::int64_t dp = 0; dp < save.dp; ++dp) {
      const std::string n = std::to_string(dp);
      EXPECT_EQ(files.at("zero_pp_rank_" + n + "_mp_rank_00_model_states.pt").rank, dp);
      EXPECT_EQ(files.at("bf16_zero_pp_rank_" + n + "_mp_rank_00_optim_states.pt").rank, dp);
    }
  }
}

TEST(DeepSpeedZero3, TheFlatPartitionIsDeepSpeedsPaddedPerParameter) {
  for (const MeasuredSave& save : zero3_saves()) {
    const workloads::Layout layout = layout_of(save);
    for (std::int64_t dp = 0; dp < save.dp; ++dp) {
      const nlohmann::json& row =
          save.files.at("bf16_zero_pp_rank_" + std::to_string(dp) + "_mp_rank_00_optim_states.pt");
      const auto elements = row.at("partition_elements").get<std::int64_t>();
      EXPECT_EQ(deepspeed_zero3_partition_elements(layout, dp), elements) << name_of(save);
      // fp32 master, exp_avg and exp_avg_sq of the partition, and Adam's fp32 step.
      EXPECT_EQ(row.at("tensor_bytes").get<std::int64_t>(), 12 * elements + 4) << name_of(save);
    }
  }
}

// Every file to the byte: torch.save's archive and the pickles as counted (the 12-layer model
// takes the pickle's memo past 255 entries, the odd shapes pad their partitions).
TEST(DeepSpeedZero3, EveryFileHasDeepSpeedsSize) {
  std::size_t compared = 0;
  for (const MeasuredSave& save : zero3_saves()) {
    const auto files = listed_files(save);
    std::uint64_t measured_total = 0, listed_total = 0;
    for (const auto& [path, row] : save.files) {
      const auto measured = row.at("bytes").get<std::uint64_t>();
      measured_total += measured;
      listed_total += files.at(path).bytes;
      EXPECT_EQ(files.at(path).bytes, measured) << path << ", " << name_of(save);
      ++compared;
    }
    EXPECT_EQ(listed_total, measured_total) << name_of(save);
  }
  EXPECT_EQ(compared, 138u);  // 84 .pt files, 18 latest, 36 recovery scripts
}

// A TP rank above 0 holds the TP-replicated norms too, so its engine state lists every tensor.
TEST(DeepSpeedZero3, EveryTpRankListsItsReplicatedTensors) {
  const std::vector<MeasuredSave> saves = zero3_saves();
  workloads::ParallelSpec p;
  p.tp = 2;
  p.dp = 2;
  p.zero_stage = 3;
  const workloads::Layout tp2(parse_model_hf_json(saves[6].config.dump(), "config.json"), p,
                              workloads::StateSpec{});
  const auto files = list_checkpoint_files(tp2, {.directory_layout = DirectoryLayout::deepspeed});
  std::map<std::string, std::uint64_t> bytes;
  for (const ListedFile& f : files) bytes[f.path] = f.bytes;
  // The same names on both TP ranks: the same pickle and archive but for the file's own name.
  EXPECT_EQ(bytes.at("zero_pp_rank_0_mp_rank_01_model_states.pt"),
            bytes.at("zero_pp_rank_0_mp_rank_00_model_states.pt"));
  // Per TP rank: embedding and output 256 × 128 each, per layer q/k/v 128 × 128, o 128 × 64,
  // fc1 256 × 128, fc2 128 × 128 and two norms of 128, the final norm; half on each DP rank.
  const std::int64_t layer = 128 * 128 + 128 * 64 + 256 * 128 + 128 * 128 + 2 * 128;
  const std::int64_t per_tp_rank = 2 * 256 * 128 + 2 * layer + 128;
  for (std::int64_t rank = 0; rank < 4; ++rank)
    EXPECT_EQ(deepspeed_zero3_partition_elements(tp2, rank), per_tp_rank / 2) << rank;
}

TEST(DeepSpeedZero3, TheLoadPhaseIsRefusedForWantOfWeights) {
  const std::string campaign =
      "[model]\nname = \"llama3-8b\"\n[parallel]\ndp = 2\nzero = 3\n"
      "[strategy]\nlayout = \"deepspeed\"\n[campaign]\nname = \"t\"\ntarget = \"out\"\n";
  const MemorySpaces spaces;
  const auto problems = [&](const std::vector<std::string>& set) {
    return check_case(parse_campaign(campaign, "c.toml", set).cases.at(0), PhaseSelection::load, 1,
                      spaces)
        .problems;
  };
  const std::string refusal =
      "the load phase reads bf16 weights, which strategy.layout = \"deepspeed\" with "
      "parallel.zero = 3 does not save (DeepSpeed keeps them only as the fp32 partition in the "
      "optimizer files): load a checkpoint of another strategy.layout, or set parallel.zero "
      "below 3";
  const std::vector<std::string> found = problems({});
  EXPECT_NE(std::find(found.begin(), found.end(), refusal), found.end());
  for (const std::string& p : problems({"parallel.zero=1"})) EXPECT_NE(p, refusal);
}

}  // namespace
}  // namespace ckpt::harness
