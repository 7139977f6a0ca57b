// The same-layout restore with the DP replicas' copies (replica_plans): every rank holds its DP
// rank 0's replicated pieces after its own, and the cooperative restore reads each stored piece
// exactly once over all processes, spread by bytes, the rest sent by the shares.

#include "harness/loadplan/replica_plans.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

constexpr const char* kTinyModel = R"(name = "tiny"
hidden_size = 128
intermediate_size = 256
num_hidden_layers = 2
num_attention_heads = 4
num_key_value_heads = 2
vocab_size = 512
)";

struct Written {
  Case c;
  Manifest manifest;
  std::vector<std::int64_t> ranks;
};

// The tiny model's full state written at DP 4 (ZeRO `zero`) by every rank, as one manifest.
Written written(int zero) {
  const campaign_test::TempDir models;
  const std::filesystem::path model = models.write("tiny.toml", kTinyModel);
  Written w{.c = campaign_test::parse("[model]\nname = \"" + model.string() +
                                      "\"\n[campaign]\nname = \"t\"\ntarget = \"out\"\n[state]\n"
                                      "scope = \"full\"\n[parallel]\ndp = 4\nzero = " +
                                      std::to_string(zero) + "\n")
                     .cases.at(0)};
  const workloads::Layout layout(w.c.model, w.c.parallel, w.c.state);
  w.ranks = selected_ranks(w.c, 4);
  const std::vector<RankPlan> plans = plan_ranks(layout, w.c, w.ranks, "/ckpt");
  std::vector<std::vector<std::uint64_t>> sums;
  for (const RankPlan& p : plans) sums.emplace_back(p.shards.size(), 0);
  w.manifest = make_manifest(w.c, 4, w.ranks, manifest_tensors(plans, sums), 1);
  return w;
}

std::vector<ReplicaPlans> every_process(const Written& w, int processes, bool cooperative) {
  const workloads::Layout layout(w.c.model, w.c.parallel, w.c.state);
  std::vector<int> process_of;
  for (std::size_t i = 0; i < w.ranks.size(); ++i)
    process_of.push_back(static_cast<int>(i * static_cast<std::size_t>(processes) / 4));
  std::vector<ReplicaPlans> out;
  for (int p = 0; p < processes; ++p)
    out.push_back(replica_plans(w.manifest, identity_spec(w.c), layout, w.ranks, process_of, p,
                                cooperative, "/ckpt"));
  return out;
}

std::uint64_t payload(const std::vector<RankPlan>& plans) {
  std::uint64_t bytes = 0;
  for (const RankPlan& p : plans) bytes += p.payload_bytes;
  return bytes;
}

TEST(ReplicaPlans, EveryReplicaHoldsDpRankZerosWeightsAfterItsOwnPieces) {
  const Written w = written(1);
  std::uint64_t stored = 0, weights = 0;
  for (const ManifestTensor& t : w.manifest.tensors) {
    stored += t.bytes;
    if (t.shard.state == workloads::StateKind::weight) weights += t.bytes;
  }
  ASSERT_GT(weights, 0u);
  const std::vector<ReplicaPlans> plans = every_process(w, 4, false);
  std::uint64_t held = 0;
  for (const ReplicaPlans& p : plans) {
    ASSERT_EQ(p.held.size(), 1u);
    EXPECT_TRUE(p.fetched.empty());
    EXPECT_TRUE(p.shares.empty());
    held += payload(p.held);
  }
  // ZeRO-1: the weights are every replica's, the optimizer state each DP rank's own part.
  EXPECT_EQ(held, stored + 3 * weights);
  const RankPlan& zero = plans[0].held[0];
  const RankPlan& two = plans[2].held[0];
  std::vector<std::uint64_t> keys0, keys2;
  for (const PlacedShard& s : zero.shards) {
    if (s.shard.state == workloads::StateKind::weight) keys0.push_back(s.data_key);
  }
  std::uint64_t own_end = 0;
  for (const PlacedShard& s : two.shards) {
    if (s.shard.state == workloads::StateKind::weight) {
      keys2.push_back(s.data_key);
      EXPECT_GE(s.memory_offset, own_end) << s.shard.name;
    } else {
      own_end = std::max(own_end, s.memory_offset + s.bytes);
    }
  }
  EXPECT_EQ(keys2, keys0);  // the same bytes, so the replica verifies against DP rank 0's
}

// Every extent the processes' plans read: file, offset, length.
using Reads = std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>>;

// The first byte two extents of `reads` both read, or "".
std::string overlap(Reads reads) {
  std::sort(reads.begin(), reads.end());
  for (std::size_t i = 1; i < reads.size(); ++i) {
    const auto& [file, offset, length] = reads[i - 1];
    if (std::get<0>(reads[i]) == file && std::get<1>(reads[i]) < offset + length)
      return file + " @" + std::to_string(std::get<1>(reads[i]));
  }
  return "";
}

TEST(ReplicaPlans, CooperativeReadsEachStoredPieceOnceAndSharesTheRest) {
  for (const int zero : {0, 1}) {
    for (const int processes : {4, 2}) {
      SCOPED_TRACE("zero " + std::to_string(zero) + ", processes " + std::to_string(processes));
      const Written w = written(zero);
      std::uint64_t stored = 0;
      for (const ManifestTensor& t : w.manifest.tensors) stored += t.bytes;
      const std::vector<ReplicaPlans> plans = every_process(w, processes, true);
      Reads reads;
      std::uint64_t fetched = 0, held = 0, sent = 0, max_piece = 0;
      std::vector<std::uint64_t> read_by(static_cast<std::size_t>(processes), 0);
      for (int p = 0; p < processes; ++p) {
        const ReplicaPlans& mine = plans[static_cast<std::size_t>(p)];
        fetched += payload(mine.fetched);
        held += payload(mine.held);
        for (const RankPlan& plan : mine.fetched) {
          for (const backends::FilePlan& f : plan.io.files) {
            for (const backends::Extent& e : f.extents)
              reads.emplace_back(f.path, e.file_offset, e.length);
          }
        }
        for (const ReplicaShare& s : mine.shares) {
          max_piece = std::max(max_piece, s.bytes);
          if (s.reader != p) continue;
          read_by[static_cast<std::size_t>(p)] += s.bytes;
          sent += s.bytes * s.receivers.size();
          EXPECT_EQ(s.receivers.size() + 1, static_cast<std::size_t>(processes));
        }
      }
      EXPECT_EQ(fetched, stored);     // each stored piece once ...
      EXPECT_EQ(overlap(reads), "");  // ... by one process
      // One rank per process: every replica's copy crossed between processes.
      if (processes == 4) {
        EXPECT_EQ(sent, held - stored);
      }
      const auto [low, high] = std::minmax_element(read_by.begin(), read_by.end());
      EXPECT_LE(*high - *low, max_piece);  // spread by bytes: within one piece of even
    }
  }
}

}  // namespace
}  // namespace ckpt::harness
