// The same-layout restore with the DP replicas' copies (replica_plans): every rank holds its DP
// rank 0's replicated pieces after its own, and the cooperative restore reads each stored piece
// exactly once over all processes, spread by bytes, the rest sent by the shares.

#include "harness/loadplan/replica_plans.hpp"

#include <fmt/format.h>
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

// The tiny model's full state written at TP `tp` x DP `dp` (ZeRO `zero`, cut as `sharding`) by
// every rank, as one manifest, in strategy.layout `directory`.
Written written(int zero, int tp = 1, int dp = 4, const std::string& directory = "dcp",
                const std::string& sharding = "flat") {
  const campaign_test::TempDir models;
  const std::filesystem::path model = models.write("tiny.toml", kTinyModel);
  Written w{.c = campaign_test::parse("[model]\nname = \"" + model.string() +
                                      "\"\n[campaign]\nname = \"t\"\ntarget = \"out\"\n[state]\n"
                                      "scope = \"full\"\n[parallel]\ntp = " +
                                      std::to_string(tp) + "\ndp = " + std::to_string(dp) +
                                      "\nzero = " + std::to_string(zero) + "\nzero_sharding = \"" +
                                      sharding + "\"" + "\n[strategy]\nlayout = \"" + directory +
                                      "\"\n")
                     .cases.at(0)};
  const workloads::Layout layout(w.c.model, w.c.parallel, w.c.state);
  w.ranks = selected_ranks(w.c, tp * dp);
  const std::vector<RankPlan> plans = plan_ranks(layout, w.c, w.ranks, "/ckpt");
  std::vector<std::vector<std::uint64_t>> sums;
  for (const RankPlan& p : plans) sums.emplace_back(p.shards.size(), 0);
  w.manifest = make_manifest(w.c, tp * dp, w.ranks, manifest_tensors(plans, sums), 1);
  return w;
}

// The process of each rank: `processes` contiguous blocks, as the run hands them out.
std::vector<int> process_of(const Written& w, int processes) {
  std::vector<int> out;
  for (std::size_t i = 0; i < w.ranks.size(); ++i)
    out.push_back(static_cast<int>(i * static_cast<std::size_t>(processes) / w.ranks.size()));
  return out;
}

// Each process's plans, planned by each process for itself as the run does.
std::vector<ReplicaPlans> every_process(const Written& w, int processes, bool cooperative) {
  const workloads::Layout layout(w.c.model, w.c.parallel, w.c.state);
  std::vector<ReplicaPlans> out;
  for (int p = 0; p < processes; ++p)
    out.push_back(replica_plans(w.manifest, identity_spec(w.c), layout, w.ranks,
                                process_of(w, processes), p, cooperative, "/ckpt"));
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

// Adds every extent `plans` read to `reads`.
void add_reads(const std::vector<RankPlan>& plans, Reads& reads) {
  for (const RankPlan& plan : plans) {
    for (const backends::FilePlan& f : plan.io.files) {
      for (const backends::Extent& e : f.extents)
        reads.emplace_back(f.path, e.file_offset, e.length);
    }
  }
}

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
        add_reads(mine.fetched, reads);
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

// A process's plans in words: each plan's rank, bytes, buffer and every extent; each share.
std::string describe(const ReplicaPlans& plans) {
  std::string out;
  for (const auto* set : {&plans.held, &plans.fetched}) {
    out += "plans:";
    for (const RankPlan& plan : *set) {
      out += " rank " + std::to_string(plan.rank) + " payload " +
             std::to_string(plan.payload_bytes) + " buffer " + std::to_string(plan.buffer_bytes);
      for (const backends::FilePlan& f : plan.io.files) {
        for (const backends::Extent& e : f.extents) {
          out += " " + f.path + "@" + std::to_string(e.file_offset) + "+" +
                 std::to_string(e.length) + ">" + std::to_string(e.memory_offset);
        }
      }
    }
    out += "\n";
  }
  for (const ReplicaShare& s : plans.shares) {
    out += "share " + std::to_string(s.reader) + " " + std::to_string(s.bytes) + " to";
    for (const int q : s.receivers) out += " " + std::to_string(q);
    out += " at";
    for (const auto& [plan, offset] : s.places)
      out += " " + std::to_string(plan) + ":" + std::to_string(offset);
    out += "\n";
  }
  return out;
}

// The dry run plans every process's restore in one pass: the plans are exactly those each process
// plans for itself, and those of the DP-only cases are what they were (each process's bytes read,
// and the process that reads each shared piece, in order, pinned below).
TEST(ReplicaPlans, OnePassPlansEveryProcessAsEachPlansItself) {
  using Kind = std::tuple<int, int, int, std::string>;  // ZeRO, TP, DP, strategy.layout
  for (const auto& [zero, tp, dp, directory] :
       {Kind{1, 1, 4, "dcp"}, Kind{0, 1, 4, "dcp"}, Kind{1, 2, 2, "dcp"}, Kind{0, 2, 2, "dcp"},
        Kind{1, 2, 2, "megatron"}}) {
    const Written w = written(zero, tp, dp, directory);
    const workloads::Layout layout(w.c.model, w.c.parallel, w.c.state);
    for (const int processes : {4, 3, 2, 6}) {
      for (const bool cooperative : {false, true}) {
        SCOPED_TRACE(fmt::format("zero {} tp {} dp {} {}, {} processes, cooperative {}", zero, tp,
                                 dp, directory, processes, cooperative));
        const std::vector<ReplicaPlans> each = every_process(w, processes, cooperative);
        int visited = 0;
        for_each_process_replica_plans(
            w.manifest, identity_spec(w.c), layout, w.ranks, process_of(w, processes), processes,
            cooperative, "/ckpt", [&](int p, const ReplicaPlans& plans) {
              EXPECT_EQ(p, visited++);
              EXPECT_EQ(describe(plans), describe(each.at(static_cast<std::size_t>(p))));
            });
        EXPECT_EQ(visited, processes);
      }
    }
  }
  const std::vector<ReplicaPlans> plans = every_process(written(1), 3, true);
  std::vector<std::uint64_t> held, fetched;
  std::string readers;
  for (const ReplicaPlans& p : plans) {
    held.push_back(payload(p.held));
    fetched.push_back(payload(p.fetched));
  }
  for (const ReplicaShare& s : plans[0].shares) readers += std::to_string(s.reader);
  EXPECT_EQ(held, (std::vector<std::uint64_t>{4266240, 2133120, 2133120}));
  EXPECT_EQ(fetched, (std::vector<std::uint64_t>{2855168, 1509760, 1607808}));
  EXPECT_EQ(readers, "012111202000122");
}

// TP 2 x DP 2, the TP-replicated tensors (the 5 norms of 128 elements) stored once, by TP rank 0:
// each TP rank 1 holds copies of them after its own pieces and its DP rank 0's, so that the
// restore gives every TP rank the norms, and the cooperative one reads each stored piece once.
TEST(ReplicaPlans, TpRanksHoldCopiesOfTheTpReplicatedTensorsReadOnce) {
  constexpr std::uint64_t kNormWeights = 5 * 128 * 2;     // bf16
  constexpr std::uint64_t kNormOptimizer = 5 * 128 * 12;  // fp32 master, exp_avg, exp_avg_sq
  for (const int zero : {0, 1}) {
    SCOPED_TRACE("zero " + std::to_string(zero));
    const Written w = written(zero, 2, 2);
    std::uint64_t stored = 0, weights_tp0 = 0, weights_tp1 = 0;
    for (const ManifestTensor& t : w.manifest.tensors) {
      stored += t.bytes;
      if (t.shard.state != workloads::StateKind::weight) continue;
      (t.rank % 2 == 0 ? weights_tp0 : weights_tp1) += t.bytes;
    }
    const std::vector<ReplicaPlans> each = every_process(w, 4, false);
    std::uint64_t held = 0;
    for (const ReplicaPlans& p : each) held += payload(p.held);
    // DP rank 1 of each TP rank: its DP rank 0's weights (ZeRO-0: its whole state); TP rank 1 on
    // both DP ranks: the norms' weights, and their optimizer state (ZeRO-1: each DP rank's part).
    const std::uint64_t dp_copies = zero == 0 ? stored : weights_tp0 + weights_tp1;
    const std::uint64_t tp_copies = 2 * kNormWeights + (zero == 0 ? 2 : 1) * kNormOptimizer;
    EXPECT_EQ(held, stored + dp_copies + tp_copies);
    // Rank 3 (TP 1, DP 1) holds every norm weight, with the bytes rank 0 holds.
    std::vector<std::uint64_t> keys0, keys3;
    for (const auto& [plan, keys] :
         {std::pair{&each[0].held[0], &keys0}, std::pair{&each[3].held[0], &keys3}}) {
      for (const PlacedShard& s : plan->shards) {
        if (s.shard.state == workloads::StateKind::weight && s.shard.global_shape.size() == 1 &&
            s.shard.global_shape[0] == 128)
          keys->push_back(s.data_key);
      }
    }
    EXPECT_EQ(keys3.size(), 5u);
    EXPECT_EQ(keys3, keys0);

    const std::vector<ReplicaPlans> once = every_process(w, 4, true);
    Reads reads;
    std::uint64_t fetched = 0, sent = 0;
    for (int p = 0; p < 4; ++p) {
      const ReplicaPlans& mine = once[static_cast<std::size_t>(p)];
      EXPECT_EQ(payload(mine.held), payload(each[static_cast<std::size_t>(p)].held));
      fetched += payload(mine.fetched);
      add_reads(mine.fetched, reads);
      for (const ReplicaShare& s : mine.shares) {
        if (s.reader == p) sent += s.bytes * s.receivers.size();
      }
    }
    EXPECT_EQ(fetched, stored);      // each stored piece once ...
    EXPECT_EQ(overlap(reads), "");   // ... by one process
    EXPECT_EQ(sent, held - stored);  // one rank per process: every copy crossed between them
  }
}

// Under per-tensor sharding DCP stores each norm chunk once, on whichever TP rank its
// deduplication picks: every other TP rank of the DP index holds a copy, TP rank 0 included.
TEST(ReplicaPlans, TpRanksHoldCopiesOfTheReplicasDcpSpreadOverThem) {
  constexpr std::uint64_t kNorms = 5 * 128 * (2 + 12);  // bf16 weights, fp32 optimizer state
  const Written w = written(3, 2, 2, "dcp", "per_tensor");
  std::uint64_t stored = 0;
  for (const ManifestTensor& t : w.manifest.tensors) stored += t.bytes;
  const std::vector<ReplicaPlans> each = every_process(w, 4, false);
  std::uint64_t held = 0;
  for (const ReplicaPlans& p : each) held += payload(p.held);
  EXPECT_EQ(held, stored + kNorms);
  // Both TP ranks of DP rank 1 hold its 64-element chunk of every norm weight, the same pieces.
  const auto norm_keys = [](const RankPlan& plan) {
    std::vector<std::uint64_t> keys;
    for (const PlacedShard& s : plan.shards) {
      if (s.shard.state == workloads::StateKind::weight && s.shard.global_shape.size() == 1 &&
          s.shard.global_shape[0] == 128 && s.shard.elements() == 64)
        keys.push_back(s.data_key);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  EXPECT_EQ(norm_keys(each[2].held[0]).size(), 5u);
  EXPECT_EQ(norm_keys(each[2].held[0]), norm_keys(each[3].held[0]));

  const std::vector<ReplicaPlans> once = every_process(w, 4, true);
  Reads reads;
  std::uint64_t fetched = 0;
  for (const ReplicaPlans& mine : once) {
    fetched += payload(mine.fetched);
    add_reads(mine.fetched, reads);
  }
  EXPECT_EQ(fetched, stored);
  EXPECT_EQ(overlap(reads), "");
}

// A resharding restore with restore.replicas = "cooperative" reads into what each rank of its
// layout holds: into per-tensor sharding at TP 2, both TP ranks hold every norm's chunk of their
// DP index, whichever of them DCP stored it on.
TEST(ReplicaPlans, ReshardedIntoPerTensorShardingEveryTpRankHoldsTheNorms) {
  const Written w = written(3, 2, 2, "dcp", "per_tensor");
  ReshardSpec spec = reshard_spec(w.c);
  spec.reader.parallel = w.c.parallel;
  spec.reader.state = w.c.state;
  const auto norm_weights = [&](std::int64_t rank) {
    int count = 0;
    const std::vector<RankPlan> plans = reshard_plans(w.manifest, spec, {rank}, "/ckpt");
    for (const PlacedShard& s : plans.front().shards) {
      count += s.shard.state == workloads::StateKind::weight &&
               s.shard.global_shape == std::vector<std::int64_t>{128} && s.shard.elements() == 64;
    }
    return count;
  };
  EXPECT_EQ(norm_weights(0) + norm_weights(1), 5);  // each stored once
  spec.reader.replicas = ReplicaRead::cooperative;
  EXPECT_EQ(norm_weights(0), 5);
  EXPECT_EQ(norm_weights(1), 5);
}

// strategy.layout "megatron" and "deepspeed" store the norms on every TP rank: each rank holds
// what it would with "dcp", its own copies in place; the cooperative restore reads TP rank 0's
// copy once for all of them, the other copies not at all.
TEST(ReplicaPlans, CooperativeReadsOneOfTheTpRanksStoredCopies) {
  for (const std::string layout : {"megatron", "deepspeed"}) {
    for (const int zero : {0, 1}) {
      SCOPED_TRACE(layout + ", zero " + std::to_string(zero));
      const Written w = written(zero, 2, 2, layout);
      std::uint64_t stored = 0, copies = 0;
      for (const ManifestTensor& t : w.manifest.tensors) {
        stored += t.bytes;
        if (t.rank % 2 == 1 && t.shard.extent == t.shard.global_shape) copies += t.bytes;
      }
      // TP rank 1's copies of the norms on DP rank 0, and under ZeRO-1 its optimizer part on DP 1.
      EXPECT_EQ(copies, zero == 0 ? 5 * 128 * 14 : 5 * 128 * 2 + 5 * 128 * 12);
      std::uint64_t held_dcp = 0;
      for (const ReplicaPlans& p : every_process(written(zero, 2, 2), 4, false))
        held_dcp += payload(p.held);
      const std::vector<ReplicaPlans> once = every_process(w, 4, true);
      Reads reads;
      std::uint64_t held = 0, fetched = 0, sent = 0;
      for (int p = 0; p < 4; ++p) {
        const ReplicaPlans& mine = once[static_cast<std::size_t>(p)];
        held += payload(mine.held);
        fetched += payload(mine.fetched);
        add_reads(mine.fetched, reads);
        for (const ReplicaShare& s : mine.shares) {
          if (s.reader == p) sent += s.bytes * s.receivers.size();
        }
      }
      EXPECT_EQ(held, held_dcp);
      EXPECT_EQ(fetched, stored - copies);
      EXPECT_EQ(overlap(reads), "");
      EXPECT_EQ(sent, held - fetched);
    }
  }
}

}  // namespace
}  // namespace ckpt::harness
