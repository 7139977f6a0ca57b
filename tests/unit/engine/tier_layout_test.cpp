// The tiered engine's geometry (TierLayout, tier_layout_problem) and its recovery plan
// (plan_recovery): pure functions, exact values.
#include "harness/engine/tier_layout.hpp"

#include <gtest/gtest.h>

#include <set>
#include <variant>

#include "harness/engine/tier_recovery.hpp"

namespace ckpt::harness {
namespace {

TierSpec spec(int per_node, int replicas, int stride = 0) {
  TierSpec t;
  t.processes_per_node = per_node;
  t.replicas = replicas;
  t.clique_stride = stride;
  t.local_dir = "/dev/shm/t/node{node}";
  return t;
}

std::string problem(const TierSpec& t, int processes, std::uint64_t part_bytes = 0) {
  return tier_layout_problem(t, processes, std::nullopt, part_bytes).value_or("");
}

TEST(TierLayout, CliquesSpanNodesAndTileTheProcesses) {
  // 4 nodes of 2 processes, F = 2, J = 2 (one node): {0,2} {1,3} {4,6} {5,7}.
  const TierLayout l = tier_layout(spec(2, 2), 8, std::nullopt);
  EXPECT_EQ(l.nodes(), 4);
  EXPECT_EQ(l.stride(), 2);
  EXPECT_EQ(l.clique(0), (std::vector<int>{0, 2}));
  EXPECT_EQ(l.clique(3), (std::vector<int>{1, 3}));
  EXPECT_EQ(l.clique(6), (std::vector<int>{4, 6}));
  EXPECT_EQ(l.node_of(5), 2);
  EXPECT_EQ(l.held_by(1), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(l.local_need_bytes(1000), 2u * 2u * 2u * 1000u);
  // F = 3, J = 2 over 12 processes: blocks of 6.
  const TierLayout three = tier_layout(spec(2, 3), 12, std::nullopt);
  EXPECT_EQ(three.clique(1), (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(three.clique(10), (std::vector<int>{6, 8, 10}));
  EXPECT_EQ(three.held_by(0), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(TierLayout, NodeDirectoryReplacesEveryPlaceholder) {
  EXPECT_EQ(node_dir("/x/node{node}/y{node}", 12).string(), "/x/node12/y12");
  EXPECT_EQ(node_dir("/local/ckpt", 3).string(), "/local/ckpt");
  EXPECT_EQ(part_path(tier_checkpoint_dir("/x", 7), 3).string(), "/x/iter_0000007/part_00003.bin");
}

TEST(TierLayout, RefusesLayoutsThatCannotWork) {
  EXPECT_EQ(problem(spec(2, 2), 8), "");
  EXPECT_EQ(problem(spec(3, 2), 8),
            "tiers.processes_per_node = 3 does not divide the 8 processes: every node needs as "
            "many processes; choose a divisor of 8");
  EXPECT_EQ(problem(spec(2, 2, 1), 8),
            "a clique inside one node: tiers.clique_stride = 1 is less than the 2 processes per "
            "node, so processes p and p + 1 share a node and its loss takes both copies; set "
            "tiers.clique_stride to at least 2 (0: one node)");
  EXPECT_EQ(problem(spec(2, 3), 8),
            "tiers.clique_stride x tiers.replicas = 2 x 3 = 6 does not divide the 8 processes (4 "
            "nodes of 2), so the cliques {p, p+J, ..., p+(F-1)J} do not tile them; choose J and F "
            "whose product divides 8 (with J = processes_per_node: F divides the node count)");
  TierSpec shared = spec(2, 2);
  shared.local_dir = "/dev/shm/t";
  EXPECT_EQ(problem(shared, 8),
            "tiers.local_dir = \"/dev/shm/t\" has no {node}: the 4 emulated nodes "
            "(tiers.processes_per_node = 2) would share one local tier, and losing one node would "
            "lose them all; put {node} in the path, e.g. \"/dev/shm/t/node{node}\"");
  TierSpec small = spec(2, 2);
  small.local_bytes = 7999;
  EXPECT_EQ(problem(small, 8, 1000),
            "tiers.local_bytes = 7999 is too small: a node's local tier holds 2 checkpoints x 2 "
            "replicas x 2 processes x 1000 bytes (the largest process's part) = 8000 bytes; raise "
            "tiers.local_bytes or lower tiers.replicas");
  small.local_bytes = 8000;
  EXPECT_EQ(problem(small, 8, 1000), "");
  TierSpec far = spec(2, 2);
  far.lost_nodes = {4};
  EXPECT_EQ(problem(far, 8),
            "tiers.lost_nodes names node 4, and the 8 processes make nodes 0 to 3 (2 per node); "
            "name nodes of this run");
  TierSpec launched = spec(0, 2);
  EXPECT_EQ(problem(launched, 8),
            "tiers.processes_per_node = 0 takes the processes per node from the MPI launch, and "
            "this launcher sets none of OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, "
            "PMI_LOCAL_SIZE; set tiers.processes_per_node");
  // The launcher's count: 8 processes on one node leave the clique inside it.
  EXPECT_EQ(tier_layout_problem(launched, 8, 8, 0)
                .value_or("")
                .find("tiers.clique_stride x tiers.replicas = 8 x 2 = 16 does not divide the 8"),
            0u);
  EXPECT_EQ(tier_layout_problem(launched, 8, 2, 0).value_or(""), "");
}

// Every node holds iteration `it` complete.
std::vector<NodeHolding> all_hold(const TierLayout& l, std::int64_t it) {
  std::vector<NodeHolding> nodes;
  for (int n = 0; n < l.nodes(); ++n) nodes.push_back({it, l.held_by(n)});
  return nodes;
}

TEST(TierRecovery, LostNodesPartsComeFromPeersElseTheRemoteTier) {
  const TierLayout l = tier_layout(spec(2, 2), 8, std::nullopt);
  const auto one = plan_recovery(l, all_hold(l, 9), {1}, -1, 4);
  ASSERT_TRUE(std::holds_alternative<RecoveryPlan>(one)) << std::get<std::string>(one);
  const RecoveryPlan& p = std::get<RecoveryPlan>(one);
  EXPECT_EQ(p.iteration, 9);
  using S = PartSource;
  EXPECT_EQ(p.source, (std::vector<S>{S::local, S::local, S::peer, S::peer, S::local, S::local,
                                      S::local, S::local}));
  EXPECT_EQ(p.from, (std::vector<int>{0, 1, 0, 1, 4, 5, 6, 7}));
  // A whole clique lost: its parts from the remote tier when it holds the same iteration...
  const auto same = std::get<RecoveryPlan>(plan_recovery(l, all_hold(l, 9), {0, 1}, 9, 1));
  EXPECT_EQ(same.source, (std::vector<S>{S::remote, S::remote, S::remote, S::remote, S::local,
                                         S::local, S::local, S::local}));
  // ... every part from its older checkpoint when it holds an older one ...
  const auto older = std::get<RecoveryPlan>(plan_recovery(l, all_hold(l, 9), {0, 1}, 7, 2));
  EXPECT_EQ(older.iteration, 7);
  EXPECT_EQ(older.source, std::vector<S>(8, S::remote));
  // ... and a refusal when it holds none.
  const auto none = plan_recovery(l, all_hold(l, 9), {0, 1}, -1, 4);
  ASSERT_TRUE(std::holds_alternative<std::string>(none));
  EXPECT_EQ(std::get<std::string>(none),
            "process 0's part of iteration 9 is in no surviving tier: its clique's nodes {0, 1} "
            "hold its 2 copies and nodes {0, 1} are lost, and the remote tier holds no complete "
            "checkpoint (tiers.drain_every = 4); lose fewer nodes of one clique, raise "
            "tiers.replicas, or drain more often");
}

TEST(TierRecovery, ASurvivingProcessTakesItsPartFromItsMemoryTier) {
  const TierLayout l = tier_layout(spec(2, 2), 8, std::nullopt);
  // Every process's memory tier holds iteration 9 but process 5's (an older copy) and process 6's
  // (none): they read their node's local tier. Node 1's processes 2 and 3 are lost, and their
  // memory with them: their parts come from their peers 0 and 1.
  const std::vector<std::int64_t> memory{9, 9, 9, 9, 9, 7, -1, 9};
  const auto planned = plan_recovery(l, all_hold(l, 9), {1}, -1, 4, memory);
  ASSERT_TRUE(std::holds_alternative<RecoveryPlan>(planned)) << std::get<std::string>(planned);
  const RecoveryPlan& p = std::get<RecoveryPlan>(planned);
  EXPECT_EQ(p.iteration, 9);
  using S = PartSource;
  EXPECT_EQ(p.source, (std::vector<S>{S::memory, S::memory, S::peer, S::peer, S::memory, S::local,
                                      S::local, S::memory}));
  EXPECT_EQ(p.from, (std::vector<int>{0, 1, 0, 1, 4, 5, 6, 7}));
  // The memory tier never outranks the local tiers' newest: at iteration 11 on every node, a
  // memory copy of 9 is not taken.
  const auto newer = std::get<RecoveryPlan>(plan_recovery(l, all_hold(l, 11), {}, -1, 4, memory));
  EXPECT_EQ(newer.iteration, 11);
  EXPECT_EQ(newer.source, std::vector<S>(8, S::local));
  EXPECT_EQ(part_source_name(S::memory), "memory");
}

// With F > 1 the memory tiers also hold the clique's replicas: a lost node's part comes from a
// surviving peer's memory (no read), from the peer's node's local tier only where that peer's
// memory holds another iteration.
TEST(TierRecovery, ALostPartComesFromAPeersMemoryTierBeforeItsLocalTier) {
  const TierLayout l = tier_layout(spec(2, 2), 8, std::nullopt);
  const std::vector<std::int64_t> memory{7, 9, 9, 9, 9, 9, 9, 9};
  const auto planned = plan_recovery(l, all_hold(l, 9), {1}, -1, 4, memory, true);
  ASSERT_TRUE(std::holds_alternative<RecoveryPlan>(planned)) << std::get<std::string>(planned);
  const RecoveryPlan& p = std::get<RecoveryPlan>(planned);
  using S = PartSource;
  EXPECT_EQ(p.source, (std::vector<S>{S::local, S::memory, S::peer, S::peer, S::memory, S::memory,
                                      S::memory, S::memory}));
  EXPECT_EQ(p.from, (std::vector<int>{0, 1, 0, 1, 4, 5, 6, 7}));
  // Process 2's peer 0 holds iteration 7 in memory: it reads node 0's copy; process 3's peer 1
  // sends from its memory.
  EXPECT_EQ(p.peer_memory,
            (std::vector<bool>{false, false, false, true, false, false, false, false}));
  // Memory tiers without replicas (F parts not kept): every peer part is read.
  const auto read = std::get<RecoveryPlan>(plan_recovery(l, all_hold(l, 9), {1}, -1, 4, memory));
  EXPECT_EQ(read.peer_memory, std::vector<bool>(8, false));
}

TEST(TierRecovery, OnlyTheNewestCompleteCopyCounts) {
  const TierLayout l = tier_layout(spec(2, 2), 8, std::nullopt);
  std::vector<NodeHolding> nodes = all_hold(l, 9);
  nodes[0] = {5, l.held_by(0)};  // node 0 never completed iteration 9
  const auto plan = std::get<RecoveryPlan>(plan_recovery(l, nodes, {}, -1, 4));
  EXPECT_EQ(plan.iteration, 9);
  EXPECT_EQ(plan.source[0], PartSource::peer);  // its copy on node 1
  EXPECT_EQ(plan.from[0], 2);
  EXPECT_EQ(plan.source[2], PartSource::local);
  const auto nothing = plan_recovery(l, std::vector<NodeHolding>(4), {}, -1, 1);
  EXPECT_EQ(std::get<std::string>(nothing),
            "no surviving node's local tier holds a complete checkpoint and the remote tier holds "
            "none (tiers.drain_every = 1); nothing to recover");
}

}  // namespace
}  // namespace ckpt::harness
