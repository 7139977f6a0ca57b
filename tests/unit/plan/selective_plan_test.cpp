// The selective transform of a plan: the layer a tensor belongs to, the rotation that says which
// checkpoint holds it, and the plan of the pieces one checkpoint holds (packed per file, buffer
// places kept).
#include "harness/plan/selective_plan.hpp"

#include <gtest/gtest.h>

#include "tests/unit/plan/shard_fixture.hpp"

namespace ckpt::harness {
namespace {

workloads::Shard named(const char* name) {
  workloads::Shard s;
  s.name = name;
  return s;
}

TEST(SelectivePlan, TheLayerIsTheFirstNumberOfTheDottedName) {
  EXPECT_EQ(tensor_layer("model.layers.7.mlp.up_proj.weight"), 7);
  EXPECT_EQ(tensor_layer("decoder.layers.12.mlp.experts.local_experts.3.linear_fc1.weight"), 12);
  EXPECT_EQ(tensor_layer("h.0.attn.c_attn.weight"), 0);
  EXPECT_EQ(tensor_layer("model.embed_tokens.weight"), std::nullopt);
  EXPECT_EQ(tensor_layer("model.layers.x7.weight"), std::nullopt);
  EXPECT_EQ(tensor_layer("lm_head.weight"), std::nullopt);
}

TEST(SelectivePlan, EachLayerIsDueOnceInEveryNCheckpoints) {
  const SelectiveSpec every3{.every = 3};
  const workloads::Shard layer4 = named("model.layers.4.mlp.up_proj.weight");
  const workloads::Shard embed = named("model.embed_tokens.weight");
  std::vector<std::int64_t> layer4_turns, embed_turns;
  for (std::int64_t turn = 0; turn < 7; ++turn) {
    if (selective_due(every3, layer4, turn)) layer4_turns.push_back(turn);
    if (selective_due(every3, embed, turn)) embed_turns.push_back(turn);
  }
  EXPECT_EQ(layer4_turns, (std::vector<std::int64_t>{1, 4}));
  EXPECT_EQ(embed_turns, (std::vector<std::int64_t>{0, 3, 6}));  // with layer 0
  EXPECT_TRUE(selective_due(SelectiveSpec{}, layer4, 2));        // every = 1: always
}

TEST(SelectivePlan, TheExpertIsTheNumberAfterAnExpertsComponent) {
  EXPECT_EQ(tensor_expert("model.layers.3.mlp.experts.5.up_proj.weight"), 5);
  EXPECT_EQ(tensor_expert("decoder.layers.1.mlp.experts.local_experts.6.linear_fc1.weight"), 6);
  EXPECT_EQ(tensor_expert("model.layers.3.mlp.gate.weight"), std::nullopt);
  EXPECT_EQ(tensor_expert("model.layers.3.mlp.experts.gate_up_proj"), std::nullopt);  // fused
}

TEST(SelectivePlan, KOfTheExpertsAreDueInTurnAndEveryOtherTensorAlways) {
  const SelectiveSpec three_of_eight{.experts = 3, .total_experts = 8};
  // Turn t holds experts t*3 .. t*3+2 modulo 8: each expert within every three turns.
  std::vector<std::vector<std::int64_t>> held(4);
  for (std::int64_t turn = 0; turn < 4; ++turn) {
    for (int e = 0; e < 8; ++e) {
      const std::string name = "model.layers.1.mlp.experts." + std::to_string(e) + ".w1.weight";
      if (selective_due(three_of_eight, named(name.c_str()), turn)) held[turn].push_back(e);
    }
  }
  EXPECT_EQ(held[0], (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(held[1], (std::vector<std::int64_t>{3, 4, 5}));
  EXPECT_EQ(held[2], (std::vector<std::int64_t>{0, 6, 7}));
  EXPECT_EQ(held[3], (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_TRUE(selective_due(three_of_eight, named("model.layers.1.mlp.gate.weight"), 1));
  EXPECT_TRUE(selective_due(three_of_eight, named("model.layers.2.self_attn.q_proj.weight"), 2));
}

// Two files: a.bin with shards of 100, 50 and 70 bytes, b.bin with one of 30.
RankPlan four_shards_in_two_files() {
  RankPlan plan;
  plan.rank = 3;
  add_shard(plan, "a.bin", 100, 0, 0);
  add_shard(plan, "a.bin", 50, 128, 128);
  add_shard(plan, "a.bin", 70, 192, 192);
  add_shard(plan, "b.bin", 30, 320, 320);
  plan.buffer_bytes = 384;
  plan.payload_bytes = 250;
  return plan;
}

TEST(SelectivePlan, KeepsTheChosenShardsPackedPerFileAtTheirBufferPlaces) {
  const Case c;
  const RankPlan out =
      selective_plan(four_shards_in_two_files(), {false, true, true, false}, c, "/ckpt/step_2");
  ASSERT_EQ(out.shards.size(), 2u);
  EXPECT_EQ(out.shards[0].file_offset, 0u);
  EXPECT_EQ(out.shards[1].file_offset, 50u);
  EXPECT_EQ(out.shards[0].memory_offset, 128u);
  EXPECT_EQ(out.shards[1].memory_offset, 192u);
  EXPECT_EQ(out.payload_bytes, 120u);
  EXPECT_EQ(out.buffer_bytes, 384u);   // the same buffer as the full plan
  ASSERT_EQ(out.io.files.size(), 1u);  // b.bin holds nothing this time
  EXPECT_EQ(out.io.files[0].path, "/ckpt/step_2/a.bin");
  EXPECT_EQ(out.io.files[0].file_size, 120u);
  ASSERT_EQ(out.io.files[0].extents.size(), 2u);
  EXPECT_EQ(out.io.files[0].extents[1].file_offset, 50u);
  EXPECT_EQ(out.io.files[0].extents[1].memory_offset, 192u);
  EXPECT_EQ(out.io.files[0].extents[1].length, 70u);
  EXPECT_EQ(out.io.bytes(), 120u);
  EXPECT_THROW(selective_plan(four_shards_in_two_files(), {true}, c, "/ckpt"), std::logic_error);
}

}  // namespace
}  // namespace ckpt::harness
