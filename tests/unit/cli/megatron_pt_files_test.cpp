// The megatron layout's .pt files against the ones Megatron-LM core_v0.16.1 and megatron-core
// 0.16.1 torch.save for tiny GPTs (tests/data/megatron/megatron_pt_files.jsonl, written by
// measure_megatron_pt.py beside it): the storages and every file to the byte (the args Namespace
// and the fixed parts of the pickle fitted to these jobs).
#include "harness/plan/megatron_pt_files.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/cli/layout_files.hpp"
#include "harness/models/model_file.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

std::vector<nlohmann::json> measured_files() {
  std::ifstream in(std::string(CKPT_SOURCE_DIR) + "/tests/data/megatron/megatron_pt_files.jsonl");
  std::vector<nlohmann::json> rows;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    if (row.contains("case")) rows.push_back(std::move(row));  // not the versions
  }
  return rows;
}

// The measured GPT as a Llama config.json (the same Megatron names and shapes), with the
// distributed optimizer as ZeRO 1 over 2 DP ranks (the file's content does not depend on DP).
workloads::Layout layout_of(const nlohmann::json& c) {
  const nlohmann::json config = {{"model_type", "llama"},
                                 {"hidden_size", c.at("hidden")},
                                 {"intermediate_size", c.at("ffn")},
                                 {"num_hidden_layers", c.at("layers")},
                                 {"num_attention_heads", c.at("heads")},
                                 {"num_key_value_heads", c.at("kv_groups")},
                                 {"vocab_size", c.at("vocab")},
                                 {"tie_word_embeddings", false},
                                 {"max_position_embeddings", 128},
                                 {"rms_norm_eps", 1e-5}};
  workloads::ParallelSpec p;
  if (c.at("distributed_optimizer").get<bool>()) {
    p.dp = 2;
    p.zero_stage = 1;
  }
  return workloads::Layout(parse_model_hf_json(config.dump(), "config.json"), p,
                           workloads::StateSpec{});
}

Case case_of(const workloads::Layout& layout) {
  Case c;
  c.model = layout.model();
  c.parallel = layout.parallel();
  c.state = layout.state();
  c.directory_layout = DirectoryLayout::megatron;
  return c;
}

std::string name_of(const nlohmann::json& row) {
  return row.at("file").get<std::string>() + ", " + row.at("case").dump();
}

std::uint64_t listed_bytes(const workloads::Layout& layout, const std::string& file,
                           bool framing = true) {
  for (const ListedFile& f : list_checkpoint_files(
           layout,
           {.directory_layout = DirectoryLayout::megatron, .framing = framing, .rank = 0})) {
    if (f.path == "mp_rank_00/" + file) return f.bytes;
  }
  return 0;
}

std::vector<nlohmann::json> torch_format_files() {
  std::vector<nlohmann::json> rows = measured_files();
  std::erase_if(rows, [](const nlohmann::json& row) { return row.at("file") == "common.pt"; });
  return rows;
}

TEST(MegatronPtFiles, TheFixtureHoldsFiveModelsWithAndWithoutTheDistributedOptimizer) {
  EXPECT_EQ(torch_format_files().size(), 15u);  // 5 × (model_optim_rng.pt twice, distrib_optim.pt)
  EXPECT_EQ(measured_files().size(), 20u);      // and each model's torch_dist common.pt
}

TEST(MegatronPtFiles, TheStoragesAreMegatronsTensors) {
  for (const nlohmann::json& row : torch_format_files()) {
    const workloads::Layout layout = layout_of(row.at("case"));
    std::uint64_t storages = 0;
    for (const auto& s : row.at("storages")) storages += s.get<std::uint64_t>();
    const bool distrib = row.at("file") == "distrib_optim.pt";
    const PtFileBytes bytes = distrib ? megatron_distrib_optim_bytes(layout, 0)
                                      : megatron_model_optim_rng_bytes(layout, case_of(layout), 0);
    EXPECT_EQ(bytes.data, storages) << name_of(row);
  }
}

// With the distributed optimizer (model_optim_rng.pt without Adam's tensors, distrib_optim.pt)
// and without (Adam's step, moments and the fp32 copies in model_optim_rng.pt).
TEST(MegatronPtFiles, EveryFileHasMegatronsSize) {
  std::size_t compared = 0;
  for (const nlohmann::json& row : torch_format_files()) {
    const workloads::Layout layout = layout_of(row.at("case"));
    EXPECT_EQ(listed_bytes(layout, row.at("file")), row.at("bytes").get<std::uint64_t>())
        << name_of(row);
    ++compared;
  }
  EXPECT_EQ(compared, 15u);
}

// common.pt holds no tensor: its args pickle the model's sizes (one byte more from 256), which the
// archive's 64-byte alignment hides at these sizes.
TEST(MegatronPtFiles, CommonPtHasMegatronCoresSize) {
  std::size_t compared = 0;
  for (const nlohmann::json& row : measured_files()) {
    if (row.at("file") != "common.pt") continue;
    EXPECT_EQ(megatron_common_pt_bytes(layout_of(row.at("case")).model()),
              row.at("bytes").get<std::uint64_t>())
        << name_of(row);
    EXPECT_EQ(row.at("storages"), nlohmann::json::array());
    ++compared;
  }
  EXPECT_EQ(compared, 5u);
}

// strategy.framing = "off" keeps the storages: the layout's tensors and the RNG states.
TEST(MegatronPtFiles, WithoutFramingTheFilesHoldTheirStoragesAlone) {
  for (const nlohmann::json& row : torch_format_files()) {
    std::uint64_t storages = 0;
    for (const auto& s : row.at("storages")) storages += s.get<std::uint64_t>();
    EXPECT_EQ(listed_bytes(layout_of(row.at("case")), row.at("file"), false), storages)
        << name_of(row);
  }
}

}  // namespace
}  // namespace ckpt::harness
