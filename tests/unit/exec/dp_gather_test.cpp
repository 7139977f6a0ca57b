// Megatron's distributed-optimizer gather inside one process (several DP ranks in one process):
// DP rank 0's buffer holds the other DP ranks' shards only after the gather copied them there.
#include "harness/exec/dp_gather.hpp"

#include <gtest/gtest.h>

#include <set>

#include "harness/comm/single_comm.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/models/model_zoo.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

workloads::Layout dp_job(int tp, int dp) {
  workloads::ParallelSpec p;
  p.tp = tp;
  p.dp = dp;
  p.zero_stage = 1;
  return workloads::Layout(zoo_model("llama3-8b"), p, workloads::StateSpec{});
}

Case megatron_case(MegatronOptimizer optimizer = MegatronOptimizer::gathered) {
  Case c;
  c.directory_layout = DirectoryLayout::megatron;
  c.megatron_optimizer = optimizer;
  c.scale = 65536;
  return c;
}

// Bytes the other DP ranks hold, from the layout alone: their optimizer shards, scaled.
std::uint64_t held_by_other_dp_ranks(const workloads::Layout& layout, const Case& c) {
  std::uint64_t bytes = 0;
  for (std::int64_t r = 0; r < layout.world_size(); ++r) {
    if (layout.coord(r).dp == 0) continue;
    for (const workloads::Shard& s : layout.shards(r)) bytes += scaled_bytes(s, c.scale);
  }
  return bytes;
}

TEST(DpGather, OneProcessWithDp4CopiesTheOtherRanksShardsIntoDpRank0) {
  const workloads::Layout layout = dp_job(1, 4);
  const Case c = megatron_case();
  const std::vector<std::int64_t> ranks{0, 1, 2, 3};
  const std::vector<RankPlan> plans = plan_ranks(layout, c, ranks, "/ckpt");
  ASSERT_EQ(plans.size(), 4u);
  std::set<std::int64_t> holders;
  for (const PlacedShard& ps : plans[0].shards) holders.insert(ps.holder);
  EXPECT_EQ(holders, (std::set<std::int64_t>{0, 1, 2, 3}));
  for (std::size_t p = 1; p < 4; ++p) EXPECT_TRUE(plans[p].shards.empty());

  DpGather gather(layout, c, ranks, 0, 1, plans, "/ckpt");
  ASSERT_TRUE(gather.active());
  EXPECT_EQ(gather.source_bytes() > 0, true);
  const auto space = make_host_space();
  ProcessBuffer buffer(plans, *space);
  gather.prepare(*space, c.data);
  fill_plans(gather.fill_held_only(plans), buffer, c.data);
  // Before the gather DP rank 0 does not have the others' bytes: it never generates them.
  const std::string before = verify_plans(plans, buffer, c.data);
  EXPECT_NE(before.find("rank 0"), std::string::npos) << before;
  SingleComm comm;
  const GatherCounts counts = gather.run(comm, buffer);
  EXPECT_EQ(counts.received_bytes, 0u);
  EXPECT_EQ(counts.local_bytes, held_by_other_dp_ranks(layout, c));
  EXPECT_EQ(verify_plans(plans, buffer, c.data), "");
}

TEST(DpGather, TensorParallelGroupsGatherApartAndPerDpGathersNothing) {
  const workloads::Layout layout = dp_job(2, 2);
  const Case c = megatron_case();
  // Process 1 of 2 emulates ranks 2, 3 (DP rank 1 of TP ranks 0 and 1): it only sends.
  const std::vector<std::int64_t> ranks{0, 1, 2, 3};
  const std::vector<RankPlan> mine = plan_ranks(layout, c, {2, 3}, "/ckpt");
  for (const RankPlan& p : mine) EXPECT_TRUE(p.shards.empty());
  const DpGather sender(layout, c, ranks, 1, 2, mine, "/ckpt");
  EXPECT_TRUE(sender.active());
  EXPECT_EQ(sender.fill_held_only(mine).size(), 2u);
  const std::vector<RankPlan> roots = plan_ranks(layout, c, {0, 1}, "/ckpt");
  const DpGather receiver(layout, c, ranks, 0, 2, roots, "/ckpt");
  EXPECT_TRUE(receiver.active());
  EXPECT_EQ(receiver.source_bytes(), 0u);  // DP rank 0 sends nothing
  for (const PlacedShard& ps : roots[1].shards)
    EXPECT_TRUE(ps.holder == 1 || ps.holder == 3) << ps.holder;

  const Case per_dp = megatron_case(MegatronOptimizer::per_dp);
  const std::vector<RankPlan> all = plan_ranks(layout, per_dp, ranks, "/ckpt");
  EXPECT_FALSE(DpGather(layout, per_dp, ranks, 0, 1, all, "/ckpt").active());
}

}  // namespace
}  // namespace ckpt::harness
