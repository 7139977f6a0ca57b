// The tiered engine's local tier in one process (one node, F = 1): a part written, the node's
// mark that its copy is complete, the pruning of older copies, what a survey finds, a lost
// node's tier removed, and a part read back byte for byte.
#include "harness/engine/tier_copies.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "harness/comm/single_comm.hpp"
#include "harness/engine/tier_recovery.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(std::size_t n, int seed) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>((i * 31 + seed) % 251);
  return out;
}

TEST(TierCopies, TheMarkMakesACopyCountAndOlderCopiesGo) {
  const test_support::TempDir dir;
  SingleComm comm;
  const TierSetup setup{.layout = TierLayout(1, 1, 1, 1),
                        .local_dir = (dir.path() / "node{node}").string(),
                        .max_part_bytes = 10000};
  const fs::path node = dir.path() / "node0";
  const std::vector<std::byte> old_part = bytes_of(10000, 1), part = bytes_of(10000, 2);
  write_part(part_path(tier_checkpoint_dir(node, 3), 0), old_part);
  ASSERT_EQ(tier_commit(comm, setup, 3, ""), "");
  write_part(part_path(tier_checkpoint_dir(node, 5), 0), part);
  // Written but not marked: a survey still finds only iteration 3.
  EXPECT_EQ(survey_nodes(comm, setup, {}).at(0).iteration, 3);
  ASSERT_EQ(tier_commit(comm, setup, 5, "/remote/step_5"), "");
  EXPECT_FALSE(fs::exists(tier_checkpoint_dir(node, 3)));
  EXPECT_FALSE(fs::exists(part_path(tier_checkpoint_dir(node, 5), 0).string() + ".tmp"));
  std::ifstream mark(tier_checkpoint_dir(node, 5) / kTierManifestName);
  const nlohmann::json j = nlohmann::json::parse(mark);
  EXPECT_EQ(j.at("parts"), nlohmann::json::array({0}));
  EXPECT_EQ(j.at("remote"), "/remote/step_5");
  const std::vector<NodeHolding> found = survey_nodes(comm, setup, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].iteration, 5);
  EXPECT_EQ(found[0].parts, std::vector<int>{0});
  // The part comes back byte for byte from the local tier.
  std::vector<std::byte> back(part.size());
  const RecoveryPlan plan{.iteration = 5, .source = {PartSource::local}, .from = {0}};
  const RecoveryBytes got = fetch_parts(comm, setup, plan, back);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.local, 10000u);
  EXPECT_EQ(back, part);
  // A part of another size is refused, not half read.
  std::vector<std::byte> small(100);
  EXPECT_EQ(fetch_parts(comm, setup, plan, small).error,
            part_path(tier_checkpoint_dir(node, 5), 0).string() + ": 10000 bytes, expected 100");
  // A lost node's local tier is gone, and with it every copy there.
  EXPECT_EQ(survey_nodes(comm, setup, {0}).at(0).iteration, -1);
  EXPECT_FALSE(fs::exists(node));
}

// tiers.memory: the flush copies the part into the memory tier first, which counts only once
// complete() marks it (after every node's tiers.json), and a recovery copies it back byte for byte.
TEST(TierCopies, TheMemoryTierHoldsTheNewestCompletePartAndGivesItBack) {
  const test_support::TempDir dir;
  SingleComm comm;
  MemoryTier memory(10000);
  const TierSetup setup{.layout = TierLayout(1, 1, 1, 1),
                        .local_dir = (dir.path() / "node{node}").string(),
                        .max_part_bytes = 10000,
                        .memory = &memory};
  const std::vector<std::byte> part = bytes_of(10000, 3);
  TierProgress progress;
  const FlushWrites flushed = tier_flush(comm, setup, 5, part, {}, progress);
  EXPECT_EQ(flushed.error, "");
  EXPECT_EQ(memory.iteration(), -1);  // stored, not yet complete in the tiers below
  EXPECT_TRUE(std::equal(part.begin(), part.end(), memory.part().begin(), memory.part().end()));
  EXPECT_LE(progress.memory_at, progress.local_at);
  ASSERT_EQ(tier_commit(comm, setup, 5, ""), "");
  memory.complete(5);
  EXPECT_EQ(survey_memory(comm, setup, {}), std::vector<std::int64_t>{5});
  EXPECT_EQ(survey_memory(comm, setup, {0}), std::vector<std::int64_t>{-1});  // lost with its node
  std::vector<std::byte> back(part.size());
  const RecoveryPlan plan{.iteration = 5, .source = {PartSource::memory}, .from = {0}};
  const RecoveryBytes got = fetch_parts(comm, setup, plan, back);
  EXPECT_EQ(got.error, "");
  EXPECT_EQ(got.memory, 10000u);
  EXPECT_EQ(got.local, 0u);
  EXPECT_EQ(back, part);
  const RecoveryPlan older{.iteration = 4, .source = {PartSource::memory}, .from = {0}};
  EXPECT_EQ(fetch_parts(comm, setup, older, back).error,
            "the memory tier holds no copy of iteration 4");
  // The next snapshot's copy makes it hold no complete checkpoint until marked again.
  memory.store(bytes_of(10000, 4));
  EXPECT_EQ(memory.iteration(), -1);
  EXPECT_THROW(memory.store(bytes_of(10001, 4)), std::invalid_argument);
}

}  // namespace
}  // namespace ckpt::harness
