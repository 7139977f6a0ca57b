// The tiered engine's local tier in one process (one node, F = 1): a part written, the node's
// mark that its copy is complete, the pruning of older copies, what a survey finds, a lost
// node's tier removed, and a part read back byte for byte.
#include "harness/engine/tier_copies.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
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

}  // namespace
}  // namespace ckpt::harness
