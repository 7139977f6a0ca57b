// The deepspeed layout under ZeRO 0, 1 and 2 against the checkpoints DeepSpeed 0.19.8 saved for
// tiny Llama-shaped models at DP 1, 2 and 4 (tests/data/deepspeed/zero012_files.jsonl, written by
// measure_zero012.py beside it): the same files, DeepSpeed's flat buffer and every file's size.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/cli/layout_files.hpp"
#include "harness/plan/deepspeed_zero0.hpp"
#include "harness/plan/deepspeed_zero12.hpp"
#include "tests/unit/deepspeed_saves.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

using testing::layout_of;
using testing::listed_files;
using testing::MeasuredSave;
using testing::name_of;

// The saves of ZeRO 1 and 2 (`zero12`) or of ZeRO 0.
std::vector<MeasuredSave> saves_of(bool zero12) {
  std::vector<MeasuredSave> saves;
  for (MeasuredSave& save : testing::measured_saves("zero012_files.jsonl")) {
    if ((save.stage > 0) == zero12) saves.push_back(std::move(save));
  }
  return saves;
}

std::vector<MeasuredSave> zero12_saves() {
  return saves_of(true);
}

std::string optimizer_file(std::int64_t dp) {
  return "bf16_zero_pp_rank_" + std::to_string(dp) + "_mp_rank_00_optim_states.pt";
}

TEST(DeepSpeedZero12, TheFixtureHoldsSixShapesAtStages1And2AndDp1To4) {
  const std::vector<MeasuredSave> saves = zero12_saves();
  ASSERT_EQ(saves.size(), 36u);  // 6 shapes × ZeRO 1, 2 × DP 1, 2, 4
  std::set<std::pair<int, std::int64_t>> points;
  for (const MeasuredSave& save : saves) points.emplace(save.stage, save.dp);
  EXPECT_EQ(points.size(), 6u);
}

TEST(DeepSpeedZero12, WritesTheFilesDeepSpeedWrites) {
  for (const MeasuredSave& save : zero12_saves()) {
    std::set<std::string> measured, listed;
    for (const auto& [path, row] : save.files) measured.insert(path);
    const auto files = listed_files(save);
    for (const auto& [path, file] : files) listed.insert(path);
    EXPECT_EQ(listed, measured) << name_of(save);
    // DP rank 0 writes the weights, latest and the recovery scripts; every rank its partition.
    EXPECT_EQ(files.at("mp_rank_00_model_states.pt").rank, 0);
    EXPECT_EQ(files.at("../zero_to_fp32.py").rank, 0);
    for (std::int64_t dp = 0; dp < save.dp; ++dp) EXPECT_EQ(files.at(optimizer_file(dp)).rank, dp);
  }
}

// The weights are views of one flat bf16 buffer padded to a multiple of 2 × DP, whose storage
// torch.save writes whole; each DP rank's partition is flat / DP of it, in fp32 three times,
// beside Adam's fp32 step.
TEST(DeepSpeedZero12, TheStoragesAreDeepSpeedsFlatBufferAndPartitions) {
  std::set<std::int64_t> paddings;
  for (const MeasuredSave& save : zero12_saves()) {
    const workloads::Layout layout = layout_of(save);
    const nlohmann::json& weights = save.files.at("mp_rank_00_model_states.pt");
    const auto flat = deepspeed_zero12_flat_elements(layout, 0);
    EXPECT_EQ(weights.at("storages"), nlohmann::json::array({2 * flat})) << name_of(save);
    EXPECT_EQ(deepspeed_zero12_model_states_data_bytes(layout, 0), 2 * flat);
    paddings.insert(flat - layout.parameters());
    for (std::int64_t dp = 0; dp < save.dp; ++dp) {
      const nlohmann::json& optimizer = save.files.at(optimizer_file(dp));
      const std::int64_t part = 4 * flat / save.dp;
      EXPECT_EQ(optimizer.at("storages"), nlohmann::json::array({4, part, part, part}))
          << name_of(save);
      EXPECT_EQ(deepspeed_zero12_optimizer_data_bytes(layout, dp), 4 + 3 * part);
    }
  }
  // The odd model (19,215 weights) pads one element at every DP size.
  EXPECT_EQ(paddings, (std::set<std::int64_t>{0, 1}));
}

// Every file to the byte: torch.save's archive and the pickles as counted (the larger models take
// the pickle's memo past 255 entries; at DP 4 the fragments of a partition start inside tensors).
TEST(DeepSpeedZero12, EveryFileHasDeepSpeedsSize) {
  std::size_t compared = 0;
  for (const MeasuredSave& save : zero12_saves()) {
    const auto files = listed_files(save);
    for (const auto& [path, row] : save.files) {
      EXPECT_EQ(files.at(path).bytes, row.at("bytes").get<std::uint64_t>())
          << path << ", " << name_of(save);
      ++compared;
    }
  }
  EXPECT_EQ(compared, 228u);  // 120 .pt files, 36 latest, 72 recovery scripts
}

// strategy.framing = "off" keeps what is not torch.save's framing: the storages, DeepSpeed's
// padding of the flat buffer and Adam's step included.
TEST(DeepSpeedZero12, WithoutFramingTheFilesHoldTheirStoragesAlone) {
  for (const MeasuredSave& save : zero12_saves()) {
    std::map<std::string, std::uint64_t> bytes;
    for (const ListedFile& f : list_checkpoint_files(
             layout_of(save), {.directory_layout = DirectoryLayout::deepspeed, .framing = false}))
      bytes[f.path] = f.bytes;
    for (const auto& [path, row] : save.files) {
      if (!path.ends_with(".pt")) continue;
      std::uint64_t storages = 0;
      for (const auto& s : row.at("storages")) storages += s.get<std::uint64_t>();
      EXPECT_EQ(bytes.at(path), storages) << path << ", " << name_of(save);
    }
  }
}

// Without ZeRO DeepSpeed's mixed-precision optimizer saves its state beside the weights in DP
// rank 0's mp_rank_00_model_states.pt: each weight, its Adam step and moments and its fp32 copy a
// storage of its own; no other file but `latest`.
TEST(DeepSpeedZero0, OneFileHoldsWeightsAndOptimizerAtDeepSpeedsSize) {
  const std::vector<MeasuredSave> saves = saves_of(false);
  ASSERT_EQ(saves.size(), 15u);  // 5 shapes × DP 1, 2, 4
  for (const MeasuredSave& save : saves) {
    const auto files = listed_files(save);
    std::set<std::string> listed;
    for (const auto& [path, file] : files) listed.insert(path);
    EXPECT_EQ(listed, (std::set<std::string>{"mp_rank_00_model_states.pt", "../latest"}))
        << name_of(save);
    const nlohmann::json& row = save.files.at("mp_rank_00_model_states.pt");
    EXPECT_EQ(files.at("mp_rank_00_model_states.pt").bytes, row.at("bytes").get<std::uint64_t>())
        << name_of(save);
    EXPECT_EQ(files.at("mp_rank_00_model_states.pt").rank, 0);
    std::uint64_t storages = 0;
    for (const auto& s : row.at("storages")) storages += s.get<std::uint64_t>();
    EXPECT_EQ(deepspeed_zero0_model_states_data_bytes(layout_of(save), 0), storages);
  }
}

}  // namespace
}  // namespace ckpt::harness
