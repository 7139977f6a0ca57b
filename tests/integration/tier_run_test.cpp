// The tiered engine as a user runs it: under mpirun with 8 processes on 4 emulated nodes of 2,
// cliques of F = 2 (and F = 1), every 2nd checkpoint drained to the backend, then node 1 lost and
// every rank recovered from the nearest tier and verified, in the same job or in a restarted one;
// and the refusals a dry run shows before any I/O.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {
namespace {

// `dp` modeled ranks (DP, ZeRO-1: process 0's part holds the weights, the others' only optimizer
// shards, so the parts differ in size), a tiered loop of `iterations` checkpoints.
std::string tiered_campaign(const Scratch& dir, const std::string& tiers, int iterations = 2,
                            int dp = 8) {
  return tiny_full_state_campaign(dir, "tiers", 1, 0,
                                  "[parallel]\ndp = " + std::to_string(dp) + R"(
zero = 1
[training]
iterations = )" + std::to_string(iterations) +
                                      R"(
iteration_seconds = 0.02
checkpoint_every = 1
[engine]
name = "tiered"
[tiers]
processes_per_node = 2
local_dir = ")" + (dir / "local" / "node{node}").string() +
                                      "\"\n" + tiers);
}

std::vector<std::string> names(const nlohmann::json& tiers) {
  return tiers.get<std::vector<std::string>>();
}

TEST(TieredRun, LostNodeRecoversFromPeersElseRemoteAndVerifies) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::optional<std::string> mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign =
      dir.write("c.toml", tiered_campaign(dir,
                                          "replicas = [2, 1]\ndrain_every = 2\nchunk_bytes = "
                                          "16384\nlost_nodes = [1]\n"));
  std::vector<std::string> args = mpirun_args(*mpirun, 8);
  args.insert(args.end(), {kBinary, "run", campaign.string(), "--output", (dir / "out").string()});
  const Outcome o = run_process(args, std::chrono::seconds(120));
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 2u) << o.describe();
  const std::vector<std::string> peers{"local", "peers"}, drained{"local", "peers", "remote"};
  const std::vector<std::string> alone{"local"}, alone_drained{"local", "remote"};
  std::vector<std::uint64_t> local_bytes;
  for (std::size_t f = 0; f < 2; ++f) {
    const nlohmann::json& r = results[f];
    SCOPED_TRACE(r.at("error").dump());
    EXPECT_EQ(r.at("status"), "ok");
    EXPECT_EQ(r.at("verified"), true);
    const nlohmann::json& t = r.at("training");
    EXPECT_EQ(t.at("tiers").at("nodes"), 4);
    EXPECT_EQ(t.at("tiers").at("clique_stride"), 2);
    EXPECT_EQ(t.at("tiers").at("replicas"), f == 0 ? 2 : 1);
    const nlohmann::json& c = t.at("checkpoints");
    ASSERT_EQ(c.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const bool remote = i % 2 == 1;  // every 2nd checkpoint is drained
      EXPECT_EQ(c[i].at("committed"), remote);
      EXPECT_EQ(names(c[i].at("tiers")),
                f == 0 ? (remote ? drained : peers) : (remote ? alone_drained : alone));
    }
    const nlohmann::json& rec = t.at("recovery");
    EXPECT_EQ(rec.at("iteration"), 1);
    EXPECT_EQ(rec.at("lost_nodes"), nlohmann::json::array({1}));
    EXPECT_EQ(rec.at("restarted"), false);
    const nlohmann::json& bytes = rec.at("bytes");
    local_bytes.push_back(bytes.at("local").get<std::uint64_t>());
    if (f == 0) {  // node 1's processes 2 and 3 from their peers 0 and 1 on node 0
      EXPECT_EQ(rec.at("parts"),
                (nlohmann::json{{"memory", 0}, {"local", 6}, {"peer", 2}, {"remote", 0}}));
      EXPECT_GT(bytes.at("peer").get<std::uint64_t>(), 0u);
      EXPECT_EQ(bytes.at("remote"), 0);
      // Each part went to its one peer: the bytes over the interconnect are every part's.
      EXPECT_EQ(bytes.at("local").get<std::uint64_t>() + bytes.at("peer").get<std::uint64_t>(),
                c[1].at("interconnect_bytes").get<std::uint64_t>());
    } else {  // no replicas: node 1's parts from the remote tier, which holds iteration 1
      EXPECT_EQ(rec.at("parts"),
                (nlohmann::json{{"memory", 0}, {"local", 6}, {"peer", 0}, {"remote", 2}}));
      EXPECT_GT(bytes.at("remote").get<std::uint64_t>(), 0u);
      EXPECT_EQ(c[1].at("interconnect_bytes"), 0);
    }
  }
  EXPECT_EQ(local_bytes[0], local_bytes[1]);
  // Every part file went through the local tiers' backend: F = 2 writes each part twice (its own
  // node's copy and its peer's), F = 1 once, the bytes the exchange carried with F = 2.
  for (std::size_t i = 0; i < 2; ++i) {
    const nlohmann::json &two = results[0].at("training").at("checkpoints").at(i),
                         &one = results[1].at("training").at("checkpoints").at(i);
    const auto sent = two.at("interconnect_bytes").get<std::uint64_t>();
    EXPECT_EQ(two.at("local_tier_bytes").get<std::uint64_t>(), 2 * sent);
    EXPECT_EQ(one.at("local_tier_bytes").get<std::uint64_t>(), sent);
  }
  // The lost node's local tier is gone; a surviving node keeps only its newest complete copy.
  EXPECT_FALSE(fs::exists(dir / "local" / "node1"));
  std::vector<std::string> kept;
  for (const auto& e : fs::directory_iterator(dir / "local" / "node0"))
    kept.push_back(e.path().filename().string());
  EXPECT_EQ(kept, std::vector<std::string>{"iter_0000001"});
  std::ifstream mark(dir / "local" / "node0" / "iter_0000001" / "tiers.json");
  EXPECT_EQ(nlohmann::json::parse(mark).at("parts"), nlohmann::json::array({0, 1}));
}

// tiers.memory: 4 processes on 2 emulated nodes, F = 2, node 1 lost after the loop: processes 0
// and 1 survive and take their parts from their own memory tiers, node 1's from their peers on
// node 0, which send them from the replicas their memory tiers hold (no read). The same job
// without the memory tier reads those parts from node 0's local tier: the same bytes, and F parts
// more per process in memory.
TEST(TieredRun, SurvivorsRecoverFromTheirMemoryTierAndTheLostNodeFromPeers) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::optional<std::string> mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign = dir.write(
      "c.toml",
      tiered_campaign(dir,
                      "memory = [true, false]\nchunk_bytes = 16384\nlost_nodes = [1]\n"
                      // Parts of the tensors alone: processes 1 to 3 then hold parts of one size.
                      "[strategy]\nframing = \"off\"\n",
                      2, 4));
  std::vector<std::string> args = mpirun_args(*mpirun, 4);
  args.insert(args.end(), {kBinary, "run", campaign.string(), "--output", (dir / "out").string()});
  const Outcome o = run_process(args, std::chrono::seconds(120));
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 2u) << o.describe();
  for (const nlohmann::json& r : results) {
    EXPECT_EQ(r.at("status"), "ok") << r.at("error");
    EXPECT_EQ(r.at("verified"), true);
  }
  const nlohmann::json &kept = results[0].at("training"), &plain = results[1].at("training");
  EXPECT_EQ(kept.at("tiers").at("memory"), true);
  EXPECT_EQ(plain.at("tiers").at("memory"), false);
  EXPECT_EQ(names(kept.at("checkpoints").at(1).at("tiers")),
            (std::vector<std::string>{"memory", "local", "peers", "remote"}));
  const nlohmann::json &rec = kept.at("recovery"), &without = plain.at("recovery");
  EXPECT_EQ(rec.at("parts"),
            (nlohmann::json{{"memory", 2}, {"local", 0}, {"peer", 2}, {"remote", 0}}));
  EXPECT_EQ(without.at("parts"),
            (nlohmann::json{{"memory", 0}, {"local", 2}, {"peer", 2}, {"remote", 0}}));
  EXPECT_EQ(rec.at("peer_parts_from_memory"), 2);
  EXPECT_EQ(without.at("peer_parts_from_memory"), 0);
  const nlohmann::json &bytes = rec.at("bytes"), &plain_bytes = without.at("bytes");
  EXPECT_EQ(bytes.at("memory"), plain_bytes.at("local"));
  EXPECT_EQ(bytes.at("peer"), plain_bytes.at("peer"));
  EXPECT_EQ(bytes.at("local"), 0);
  EXPECT_EQ(bytes.at("remote"), 0);
  // Each part went to its one peer: the interconnect carried every part once.
  EXPECT_EQ(bytes.at("memory").get<std::uint64_t>() + bytes.at("peer").get<std::uint64_t>(),
            kept.at("checkpoints").at(1).at("interconnect_bytes").get<std::uint64_t>());
  EXPECT_GT(bytes.at("peer").get<std::uint64_t>(), 0u);
  const nlohmann::json& seconds = rec.at("seconds_by_source");
  EXPECT_EQ(seconds.at("local"), 0.0);
  EXPECT_EQ(seconds.at("remote"), 0.0);
  EXPECT_EQ(without.at("seconds_by_source").at("memory"), 0.0);
  // The memory tier holds F = 2 parts of at most the largest process's (process 0's, whose part is
  // largest in every other buffer too): the dry run's and the run's memory per process grow by
  // twice it. Processes 1, 2 and 3 hold parts of one size, half of the peers' bytes, so process
  // 0's is the memory tiers' bytes less that.
  const auto memory_of = [](const nlohmann::json& r) {
    return r.at("memory_bytes_per_process").get<std::uint64_t>();
  };
  const auto own = bytes.at("memory").get<std::uint64_t>();
  const auto peers = bytes.at("peer").get<std::uint64_t>();
  EXPECT_EQ(memory_of(results[0]) - memory_of(results[1]), 2 * (own - peers / 2));
  EXPECT_TRUE(contains(o.out, "case 1: recovery of iteration 1 after losing nodes {1}: ")) << o.out;
  EXPECT_TRUE(contains(o.out, "; memory 2 parts, ")) << o.out;
  EXPECT_TRUE(contains(o.out, "; peer 2 parts (2 from the peers' memory), ")) << o.out;
  const fs::path run = fs::directory_iterator(dir / "out")->path();  // the run's directory
  const Outcome report = ckptbench({"report", run.string()});
  ASSERT_EQ(report.exit_code, 0) << report.describe();
  EXPECT_TRUE(contains(report.out, "Recovery from the tiers (tiers.lost_nodes)")) << report.out;
}

// The job restarted after a failure: a tiered training job leaves each node's local tier
// (iteration 2) and one drained checkpoint (iteration 1); a job of its own then loses node 1 and
// recovers every rank, node 1's parts from their peers on node 0; with the drained checkpoint
// gone, losing nodes 0 and 1 (process 0's whole clique) is refused, naming the part, and so is a
// node's damaged tiers.json, naming the file.
TEST(TieredRun, RestartedJobRecoversFromPeersAndRefusesAPartNoTierHolds) {
  if (const std::string why = why_no_mpirun(); !why.empty()) GTEST_SKIP() << why;
  const std::optional<std::string> mpirun = find_mpirun();
  Scratch dir;
  const fs::path campaign = dir.write(
      "c.toml", tiered_campaign(dir, "replicas = 2\ndrain_every = 2\nchunk_bytes = 16384\n", 3));
  const auto job = [&](const std::string& phase, const std::string& lost, const std::string& out) {
    std::vector<std::string> args = mpirun_args(*mpirun, 8);
    args.insert(args.end(), {kBinary, "run", campaign.string(), "--phase", phase, "--set",
                             "tiers.lost_nodes=" + lost, "--output", (dir / out).string()});
    return run_process(args, std::chrono::seconds(120));
  };
  const Outcome trained = job("checkpoint", "[]", "trained");
  ASSERT_EQ(trained.exit_code, 0) << trained.describe();
  const auto loop = read_results(dir / "trained");
  ASSERT_EQ(loop.size(), 1u) << trained.describe();
  const nlohmann::json& t = loop[0].at("training");
  ASSERT_EQ(t.at("committed_iteration"), 1) << t.dump();
  // F = 2: each part went to its one peer, so these are every part's bytes.
  const auto part_bytes = t.at("checkpoints").at(2).at("interconnect_bytes").get<std::uint64_t>();

  const Outcome restarted = job("restore", "[1]", "restarted");
  ASSERT_EQ(restarted.exit_code, 0) << restarted.describe();
  const auto records = read_results(dir / "restarted");
  ASSERT_EQ(records.size(), 1u) << restarted.describe();
  const nlohmann::json& r = records[0];
  EXPECT_EQ(r.at("status"), "ok") << r.at("error");
  EXPECT_EQ(r.at("verified"), true);
  const nlohmann::json& rec = r.at("training").at("recovery");
  EXPECT_EQ(rec.at("restarted"), true);
  EXPECT_EQ(rec.at("iteration"), 2);  // the local tiers' newest, not the backend's
  EXPECT_EQ(rec.at("parts"),
            (nlohmann::json{{"memory", 0}, {"local", 6}, {"peer", 2}, {"remote", 0}}));
  const nlohmann::json& bytes = rec.at("bytes");
  EXPECT_GT(bytes.at("peer").get<std::uint64_t>(), 0u);
  EXPECT_EQ(bytes.at("local").get<std::uint64_t>() + bytes.at("peer").get<std::uint64_t>(),
            part_bytes);
  EXPECT_EQ(bytes.at("remote"), 0);
  EXPECT_TRUE(r.at("training").at("checkpoints").empty());
  EXPECT_FALSE(fs::exists(dir / "local" / "node1"));

  fs::remove_all(loop[0].at("checkpoint_dir").get<std::string>());
  const Outcome refused = job("restore", "[0, 1]", "refused");
  EXPECT_EQ(refused.exit_code, 2) << refused.describe();
  EXPECT_TRUE(contains(refused.out + refused.err,
                       "process 0's part of iteration 2 is in no surviving tier: its clique's "
                       "nodes {0, 1} hold its 2 copies"))
      << refused.describe();

  // A damaged tiers.json is refused, naming the file and the key, rather than guessed at.
  const fs::path mark = dir / "local" / "node2" / "iter_0000002" / "tiers.json";
  ASSERT_TRUE(fs::exists(mark));
  std::ofstream(mark) << R"({"iteration": "two"})";
  const Outcome damaged = job("restore", "[1]", "damaged");
  EXPECT_EQ(damaged.exit_code, 2) << damaged.describe();
  EXPECT_TRUE(contains(damaged.out + damaged.err,
                       "the local tier of node 2: " + mark.string() + ": `iteration`: "))
      << damaged.describe();
}

// tiers.local_backend = "uring": one process, one node, F = 1: each part file goes through io_uring
// (every byte of every checkpoint counted by it), and the drained checkpoint restores verified.
TEST(TieredRun, TheLocalTierWritesThroughTheBackendItNames) {
  const Outcome backends = ckptbench({"backends", "--json"});
  ASSERT_EQ(backends.exit_code, 0) << backends.describe();
  bool uring = false;
  for (const nlohmann::json& b : nlohmann::json::parse(backends.out))
    uring = uring || (b.at("name") == "uring" && b.at("available") == true);
  Scratch dir;
  const fs::path campaign = dir.write("c.toml", tiny_full_state_campaign(dir, "tiers", 1, 0, R"(
[training]
iterations = 2
iteration_seconds = 0.01
checkpoint_every = 1
[engine]
name = "tiered"
[tiers]
processes_per_node = 1
replicas = 1
local_backend = "uring"
local_dir = ")" + (dir / "local" / "node{node}").string() + "\"\n"));
  const Outcome o = ckptbench({"run", campaign.string(), "--output", (dir / "out").string()});
  if (!uring) {  // refused before any I/O, naming the key and the registry's reason
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.out + o.err, "tiers.local_backend = \"uring\": ")) << o.describe();
    EXPECT_FALSE(fs::exists(dir / "local"));
    return;
  }
  ASSERT_EQ(o.exit_code, 0) << o.describe();
  const auto results = read_results(dir / "out");
  ASSERT_EQ(results.size(), 1u) << o.describe();
  EXPECT_EQ(results[0].at("status"), "ok") << results[0].at("error");
  EXPECT_EQ(results[0].at("verified"), true);
  const nlohmann::json& c = results[0].at("training").at("checkpoints");
  ASSERT_EQ(c.size(), 2u);
  const auto part = fs::file_size(dir / "local" / "node0" / "iter_0000001" / "part_00000.bin");
  for (const nlohmann::json& checkpoint : c) EXPECT_EQ(checkpoint.at("local_tier_bytes"), part);
  EXPECT_EQ(results[0].at("config").at("tiers").at("local_backend"), "uring");
}

TEST(TieredRun, DryRunRefusesUnrecoverableAndBadCliquesBeforeAnyIo) {
  Scratch dir;
  const std::vector<std::pair<std::string, std::string>> refusals{
      {"lost_nodes = [0, 1]\ndrain_every = 8\n",
       "process 0's part of iteration 1 is in no surviving tier"},
      {"clique_stride = 1\n", "a clique inside one node: tiers.clique_stride = 1"},
      {"replicas = 3\n", "tiers.clique_stride x tiers.replicas = 2 x 3 = 6 does not divide"},
      {"local_bytes = 1000\n", "tiers.local_bytes = 1000 is too small"}};
  for (const auto& [tiers, words] : refusals) {
    const fs::path campaign = dir.write("c.toml", tiered_campaign(dir, tiers));
    const Outcome o = ckptbench({"run", campaign.string(), "--dry-run", "--processes", "8",
                                 "--output", (dir / "out").string()});
    EXPECT_EQ(o.exit_code, 2) << o.describe();
    EXPECT_TRUE(contains(o.out + o.err, words)) << words << "\n" << o.describe();
  }
  EXPECT_FALSE(fs::exists(dir / "local"));
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace
}  // namespace ckpt::integration
