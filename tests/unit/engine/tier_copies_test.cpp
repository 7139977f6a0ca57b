// The tiered engine's local tier in one process (one node, F = 1): a part written, the node's
// mark that its copy is complete, the pruning of older copies, what a survey finds, a lost
// node's tier removed, a part read back byte for byte, and every part file moved through the local
// tier's backend (its byte counts, its errors naming the path).
#include "harness/engine/tier_copies.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "harness/comm/single_comm.hpp"
#include "harness/common/config_error.hpp"
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
  std::vector<std::byte> old_part = bytes_of(10000, 1), part = bytes_of(10000, 2);
  ASSERT_EQ(write_part(*setup.local, part_path(tier_checkpoint_dir(node, 3), 0), old_part).error,
            "");
  ASSERT_EQ(tier_commit(comm, setup, 3, ""), "");
  ASSERT_EQ(write_part(*setup.local, part_path(tier_checkpoint_dir(node, 5), 0), part).error, "");
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
  std::vector<std::byte> part = bytes_of(10000, 3);
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

// With F > 1 the memory tier keeps the peers' parts beside its own, each in a slot of the largest
// part's size, until the next snapshot's store forgets them.
TEST(TierCopies, TheMemoryTierKeepsItsPeersReplicasUntilTheNextSnapshot) {
  MemoryTier memory(100, 2, 300);
  memory.store(bytes_of(100, 1));
  const std::vector<std::byte> peer = bytes_of(300, 2), other = bytes_of(250, 3);
  std::span<std::byte> slot = memory.replica(0, 6, 300);
  std::copy(peer.begin(), peer.end(), slot.begin());
  slot = memory.replica(1, 2, 250);
  std::copy(other.begin(), other.end(), slot.begin());
  ASSERT_TRUE(memory.replica_of(6).has_value());
  EXPECT_TRUE(std::equal(peer.begin(), peer.end(), memory.replica_of(6)->begin(),
                         memory.replica_of(6)->end()));
  EXPECT_TRUE(std::equal(other.begin(), other.end(), memory.replica_of(2)->begin(),
                         memory.replica_of(2)->end()));
  EXPECT_EQ(memory.part().size(), 100u);
  EXPECT_FALSE(memory.replica_of(3).has_value());
  EXPECT_THROW(memory.replica(1, 3, 301), std::invalid_argument);
  EXPECT_THROW(memory.replica(2, 3, 10), std::invalid_argument);
  memory.store(bytes_of(100, 4));
  EXPECT_FALSE(memory.replica_of(6).has_value());
}

// The local tier's part files go through its backend and the one executor: the bytes it counts are
// the plan's exactly (a part, then one in chunks of a quarter plus the rest), a write the backend
// refuses comes back as its error naming the path, and nothing is named a part unless whole.
TEST(TierCopies, PartFilesMoveThroughTheLocalTiersBackend) {
  const test_support::TempDir dir;
  SingleComm comm;
  const TierSetup setup{.layout = TierLayout(1, 1, 1, 1),
                        .local_dir = (dir.path() / "node{node}").string(),
                        .max_part_bytes = 10000,
                        .chunk_bytes = 2500};
  EXPECT_EQ(setup.local->name(), "posix");
  EXPECT_EQ(local_tier_backend_problem("posix"), std::nullopt);
  EXPECT_EQ(local_tier_backend_problem("mpiio"),
            "tiers.local_backend = \"mpiio\": a local tier is written through \"posix\" or "
            "\"uring\" (file backends that stream a part through a file kept open); choose one "
            "of them");
  EXPECT_THROW(make_local_tier_backend("mpiio"), std::invalid_argument);
  std::vector<std::byte> part = bytes_of(10000, 5);
  TierProgress progress;
  EXPECT_EQ(tier_flush(comm, setup, 7, part, {}, progress).error, "");
  EXPECT_EQ(progress.local_bytes, 10000u);  // F = 1: its own part, no replicas
  const fs::path written = part_path(tier_checkpoint_dir(dir.path() / "node0", 7), 0);
  EXPECT_EQ(fs::file_size(written), 10000u);

  // In chunks, the file opened once: four transfers of 2500 bytes and one open, sync and close.
  std::vector<std::byte> back(10000);
  PartFile reader(*setup.local, written, 10000, 2500, false);
  for (std::size_t k = 0; reader.next_bytes() > 0; ++k)
    ASSERT_TRUE(reader.next(std::span(back).subspan(k * 2500, reader.next_bytes())));
  const Execution read = reader.finish();
  EXPECT_EQ(read.error, "");
  EXPECT_EQ(read.bytes, 10000u);
  EXPECT_EQ(read.seconds.size(), 1u);  // one run of calls through the same open file
  EXPECT_EQ(back, part);

  // A chunk short of the whole: never renamed into place.
  const fs::path partial = dir.path() / "partial.bin";
  PartFile half(*setup.local, partial, 10000, 5000, true);
  ASSERT_TRUE(half.next(std::span(part).first(5000)));
  EXPECT_EQ(half.finish().error, partial.string() + ".tmp: 1 of 2 chunks moved");
  EXPECT_FALSE(fs::exists(partial));

  // The backend refuses to open the temporary name (a directory is there): its error, with the
  // path, is the flush's.
  const fs::path blocked = part_path(tier_checkpoint_dir(dir.path() / "node0", 8), 0);
  fs::create_directories(blocked.string() + ".tmp/inside");
  EXPECT_EQ(tier_flush(comm, setup, 8, part, {}, progress).error,
            "local tier: posix: open for writing " + blocked.string() + ".tmp: Is a directory");
  EXPECT_EQ(progress.local_bytes, 0u);
  EXPECT_FALSE(fs::exists(blocked));
}

// tiers.json has one writer and one reader: what one writes the other gives back field for field;
// a damaged mark is refused naming the file and the key, and a survey reports it for its node.
TEST(TierCopies, TheTierManifestReadsBackWhatWasWrittenAndRefusesADamagedOne) {
  const test_support::TempDir dir;
  const TierManifest mark{.iteration = 9,
                          .node = 1,
                          .processes = 8,
                          .processes_per_node = 2,
                          .replicas = 2,
                          .clique_stride = 2,
                          .parts = {2, 3, 6, 7},
                          .remote = "/remote/step_9"};
  write_tier_manifest(dir.path(), mark);
  const std::optional<TierManifest> back = read_tier_manifest(dir.path());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->iteration, 9);
  EXPECT_EQ(back->node, 1);
  EXPECT_EQ(back->processes, 8);
  EXPECT_EQ(back->processes_per_node, 2);
  EXPECT_EQ(back->replicas, 2);
  EXPECT_EQ(back->clique_stride, 2);
  EXPECT_EQ(back->parts, (std::vector<int>{2, 3, 6, 7}));
  EXPECT_EQ(back->remote, "/remote/step_9");
  EXPECT_FALSE(read_tier_manifest(dir.path() / "absent").has_value());

  const fs::path node = dir.path() / "node0";
  fs::create_directories(tier_checkpoint_dir(node, 4));
  std::ofstream(tier_checkpoint_dir(node, 4) / kTierManifestName)
      << R"({"iteration": 4, "node": 0, "processes": 1, "processes_per_node": 1, "replicas": 1,
            "clique_stride": 1, "parts": [0, 5], "remote": ""})";
  try {
    read_tier_manifest(tier_checkpoint_dir(node, 4));
    ADD_FAILURE() << "a part outside the processes was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  (tier_checkpoint_dir(node, 4) / kTierManifestName).string() + ": `parts[1]`: "),
              std::string::npos)
        << e.what();
  }
  SingleComm comm;
  const TierSetup setup{.layout = TierLayout(1, 1, 1, 1), .local_dir = node.string()};
  const std::vector<NodeHolding> found = survey_nodes(comm, setup, {});
  EXPECT_EQ(found.at(0).iteration, -1);
  EXPECT_NE(found.at(0).damaged.find("`parts[1]`"), std::string::npos) << found.at(0).damaged;
}

}  // namespace
}  // namespace ckpt::harness
