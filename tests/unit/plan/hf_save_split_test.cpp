// Which tensors share a file when a model's weights take several safetensors files. For every
// small fixture, tests/data/hf/saved/split.json (make_fixtures.py split, transformers 5.24) holds
// the order save_pretrained meets the tensors in, the tensors that share one storage, and the
// file of every tensor in a real save at a fifth of the model's bytes. ckptbench must meet the
// tensors in the same order and put every tensor into the same file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/models/model_file.hpp"
#include "harness/plan/safetensors_plan.hpp"
#include "workloads/hf_save_order.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

const fs::path kHfData = fs::path(CKPT_SOURCE_DIR) / "tests/data/hf";

nlohmann::json split_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

workloads::Layout weights_of(const std::string& fixture) {
  workloads::StateSpec state;
  state.scope = workloads::StateScope::weights;
  return workloads::Layout(load_model_hf_json(kHfData / "fixtures" / fixture / "config.json"), {},
                           state);
}

// The first place two orders differ, for the failure message.
std::string first_difference(const std::vector<std::string>& ours,
                             const std::vector<std::string>& theirs) {
  for (std::size_t i = 0; i < std::min(ours.size(), theirs.size()); ++i) {
    if (ours[i] != theirs[i])
      return "at " + std::to_string(i) + ": ckptbench " + ours[i] + ", transformers " + theirs[i];
  }
  return "lengths " + std::to_string(ours.size()) + " and " + std::to_string(theirs.size());
}

TEST(HfSaveSplit, TensorsInSavePretrainedsOrderAndEachInTheFileARealSavePutsItIn) {
  const nlohmann::json split = split_json(kHfData / "saved" / "split.json");
  ASSERT_GE(split.size(), 100u);
  for (const auto& [fixture, entry] : split.items()) {
    SCOPED_TRACE(fixture);
    const nlohmann::json expected = split_json(kHfData / "fixtures" / fixture / "expected.json");
    std::vector<std::string> sorted;
    for (const auto& tensor : expected.at("tensors").items()) sorted.push_back(tensor.key());
    const workloads::Layout layout = weights_of(fixture);
    std::vector<std::string> laid;
    for (const workloads::Shard& s : layout.shards(0)) laid.push_back(s.name);
    const workloads::HfSaveSequence sequence =
        workloads::hf_save_sequence(laid, layout.model().hf_save_order);
    std::vector<std::string> ours, theirs;
    std::map<std::size_t, std::set<std::string>> our_storages;
    for (std::size_t k = 0; k < sequence.order.size(); ++k) {
      ours.push_back(laid[sequence.order[k]]);
      our_storages[sequence.storage[k]].insert(ours.back());
    }
    for (const std::size_t i : entry.at("order").get<std::vector<std::size_t>>())
      theirs.push_back(sorted.at(i));
    EXPECT_TRUE(ours == theirs) << first_difference(ours, theirs);
    // The tensors that share a storage (the last number of a group is its bytes).
    std::set<std::set<std::string>> shared, our_shared;
    for (const auto& group : entry.at("groups")) {
      const auto members = group.get<std::vector<std::uint64_t>>();
      std::set<std::string> names;
      for (std::size_t m = 0; m + 1 < members.size(); ++m) names.insert(sorted.at(members[m]));
      shared.insert(std::move(names));
    }
    for (const auto& [storage, names] : our_storages) {
      if (names.size() > 1) our_shared.insert(names);
    }
    EXPECT_EQ(our_shared, shared);
    // transformers keeps a few tensors in float32 (routers), which ckptbench writes in bf16:
    // their files hold other bytes, so the files are compared only where every tensor is bf16.
    if (expected.contains("not_bfloat16")) continue;
    Case c;
    c.max_shard_bytes = entry.at("limit").get<std::uint64_t>();
    const SafetensorsFiles files(layout, c);
    std::map<std::string, std::size_t> file_of;
    std::size_t index = 0;
    for (const auto& [file, shards] : files.group(0)) {
      for (const workloads::Shard& s : shards) file_of[s.name] = index;
      ++index;
    }
    const auto real = entry.at("file").get<std::vector<std::size_t>>();
    ASSERT_EQ(real.size(), sorted.size());
    for (std::size_t i = 0; i < sorted.size(); ++i)
      EXPECT_EQ(file_of[sorted[i]], real[i]) << sorted[i];
  }
}

// transformers' natural order: numbers as numbers, a number before any text, a part's trailing
// digits as a number after its text; experts cut from one fused tensor by part, then expert.
TEST(HfSaveSplit, ReSortedFamiliesSortNaturallyAndCutFusedExpertsInPlace) {
  workloads::HfSaveOrder rule;
  rule.resorted = true;
  rule.renames = {{"block_sparse_moe", "mlp"}};
  rule.expert_parts = {
      {"w1", "gate_up_proj", 0}, {"w3", "gate_up_proj", 1}, {"w2", "down_proj", 0}};
  const std::vector<std::string> names{"model.layers.10.input_layernorm.weight",
                                       "model.layers.2.block_sparse_moe.experts.1.w1.weight",
                                       "model.layers.2.block_sparse_moe.experts.0.w3.weight",
                                       "model.layers.2.block_sparse_moe.experts.0.w1.weight",
                                       "model.layers.2.block_sparse_moe.experts.1.w2.weight",
                                       "model.layers.2.block_sparse_moe.gate.weight",
                                       "model.layers.2.input_layernorm.weight",
                                       "lm_head.weight",
                                       "model.embed_tokens.weight",
                                       "model.h2.weight",
                                       "model.h10.weight",
                                       "model.h.weight"};
  const workloads::HfSaveSequence s = workloads::hf_save_sequence(names, rule);
  std::vector<std::string> ordered;
  for (const std::size_t i : s.order) ordered.push_back(names[i]);
  EXPECT_EQ(ordered,
            (std::vector<std::string>{"lm_head.weight", "model.embed_tokens.weight",
                                      "model.h.weight", "model.h2.weight", "model.h10.weight",
                                      "model.layers.2.input_layernorm.weight",
                                      "model.layers.2.block_sparse_moe.experts.1.w2.weight",
                                      "model.layers.2.block_sparse_moe.experts.0.w1.weight",
                                      "model.layers.2.block_sparse_moe.experts.1.w1.weight",
                                      "model.layers.2.block_sparse_moe.experts.0.w3.weight",
                                      "model.layers.2.block_sparse_moe.gate.weight",
                                      "model.layers.10.input_layernorm.weight"}));
  // The w1s share one storage, the w3s another; every other tensor has its own.
  EXPECT_EQ(s.storage[7], s.storage[8]);
  EXPECT_NE(s.storage[8], s.storage[9]);
  EXPECT_EQ(std::set<std::size_t>(s.storage.begin(), s.storage.end()).size(), names.size() - 1);
}

// A module's children in the order its class registers them; an unlisted child after the
// listed ones, in the layout's order; numbers as numbers.
TEST(HfSaveSplit, ModuleOrderFollowsTheRegistrationList) {
  workloads::HfSaveOrder rule;
  rule.modules = {"model", "embed_tokens", "layers", "self_attn", "mlp", "norm", "lm_head"};
  const std::vector<std::string> names{"model.embed_tokens.weight",
                                       "model.layers.0.input_layernorm.weight",
                                       "model.layers.0.self_attn.q_proj.weight",
                                       "model.layers.0.post_attention_layernorm.weight",
                                       "model.layers.0.mlp.up_proj.weight",
                                       "model.layers.10.self_attn.q_proj.weight",
                                       "model.layers.9.self_attn.q_proj.weight",
                                       "model.norm.weight",
                                       "lm_head.weight"};
  const workloads::HfSaveSequence s = workloads::hf_save_sequence(names, rule);
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 2, 4, 1, 3, 6, 5, 7, 8}));
}

}  // namespace
}  // namespace ckpt::harness
