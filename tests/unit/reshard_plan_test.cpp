// The resharding planner against a brute-force oracle: over random pairs of parallel grids, every
// needed element is read exactly once, from where the writer put it, and bytes read are exactly
// the needed bytes (exact) or the whole stored pieces touched (whole_items).
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "harness/reshard/reshard_plan.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

using workloads::Layout;
using workloads::ModelSpec;
using workloads::ParallelSpec;
using workloads::Shard;
using workloads::StateKind;
using workloads::StateSpec;

// Where a byte comes from: file index and byte offset in it (-1: nowhere yet).
struct Source {
  std::int64_t file = -1;
  std::int64_t offset = -1;
  bool operator==(const Source&) const = default;
};

// Global flat element of slice-local element `k` of a geometry, by unravelling (independent of
// global_runs).
std::int64_t global_element(const ShardGeometry& g, std::int64_t k) {
  std::int64_t local = g.flat_begin + k;
  std::int64_t global = 0;
  std::int64_t stride = 1;
  for (std::size_t d = g.global_shape.size(); d-- > 0;) {
    global += (g.offset[d] + local % g.extent[d]) * stride;
    local /= g.extent[d];
    stride *= g.global_shape[d];
  }
  return global;
}

using TensorId = std::pair<StateKind, std::string>;

struct Stored {
  StoredPieces pieces;
  std::map<std::string, std::int64_t> file_ids;
  // (tensor, global element) -> file and byte offset of the element's first byte; piece index.
  std::map<TensorId, std::map<std::int64_t, std::pair<Source, const StoredPiece*>>> where;
};

Stored store(const Layout& layout, std::int64_t scale) {
  Stored out;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    const std::string file = "r" + std::to_string(rank);
    out.file_ids[file] = rank;
    std::uint64_t at = 7;  // files start with some other bytes
    for (const Shard& s : layout.shards(rank)) {
      StoredPiece piece{file, at, shard_geometry(s, scale)};
      if (piece.geometry.elements() <= 0) continue;
      at += piece.geometry.bytes() + 3;  // and have gaps between pieces
      out.pieces[{s.state, s.name}].push_back(piece);
    }
  }
  for (auto& [id, list] : out.pieces) {
    for (const StoredPiece& piece : list) {
      for (std::int64_t k = 0; k < piece.geometry.elements(); ++k) {
        const auto offset = static_cast<std::int64_t>(piece.file_offset) + k * piece.geometry.element_bytes;
        const bool fresh = out.where[id]
                               .emplace(global_element(piece.geometry, k),
                                        std::make_pair(Source{out.file_ids[piece.file], offset}, &piece))
                               .second;
        EXPECT_TRUE(fresh) << "the writer stores element twice: " << id.second;
      }
    }
  }
  return out;
}

std::vector<NeededShard> needed_of(const Layout& layout, std::int64_t rank, std::int64_t scale,
                                   std::uint64_t& bytes) {
  std::vector<NeededShard> needed;
  bytes = 0;
  for (const Shard& s : layout.shards(rank)) {
    NeededShard n{s.name, s.state, shard_geometry(s, scale), bytes};
    if (n.geometry.elements() <= 0) continue;
    bytes += n.geometry.bytes() + 5;
    needed.push_back(std::move(n));
  }
  return needed;
}

// Runs `plan` on tags: reads, then copies. Fails on a byte written twice by reads.
std::vector<Source> execute(const RankReadPlan& plan, const Stored& stored) {
  std::vector<Source> memory(plan.buffer_bytes + 64);
  for (const ReadRequest& r : plan.requests) {
    const std::int64_t file = stored.file_ids.at(plan.files.at(r.file));
    for (std::uint64_t b = 0; b < r.length; ++b) {
      Source& tag = memory.at(r.memory_offset + b);
      EXPECT_EQ(tag.file, -1) << "byte " << r.memory_offset + b << " read twice";
      tag = {file, static_cast<std::int64_t>(r.file_offset + b)};
    }
  }
  for (const NarrowCopy& c : plan.copies) {
    for (std::uint64_t b = 0; b < c.length; ++b) memory.at(c.to + b) = memory.at(c.from + b);
  }
  return memory;
}

void check_pair(const Layout& writer, const Layout& reader, std::int64_t scale, ReshardRead mode) {
  const Stored stored = store(writer, scale);
  for (std::int64_t rank = 0; rank < reader.world_size(); ++rank) {
    std::uint64_t shards_bytes = 0;
    const std::vector<NeededShard> needed = needed_of(reader, rank, scale, shards_bytes);
    const RankReadPlan plan = plan_rank_reads(needed, stored.pieces, mode, shards_bytes, 16);
    const std::vector<Source> memory = execute(plan, stored);
    std::uint64_t needed_bytes = 0;
    std::uint64_t padding_bytes = 0;
    std::set<const StoredPiece*> touched;
    for (const NeededShard& n : needed) {
      const auto& where = stored.where.at({n.state, n.name});
      const std::int64_t eb = n.geometry.element_bytes;
      for (std::int64_t k = 0; k < n.geometry.elements(); ++k) {
        const auto found = where.find(global_element(n.geometry, k));
        const std::uint64_t at = n.memory_offset + static_cast<std::uint64_t>(k * eb);
        if (found == where.end()) {  // vocabulary padding of the reader's TP
          padding_bytes += static_cast<std::uint64_t>(eb);
          ASSERT_EQ(memory[at].file, -1) << n.name << " padding read";
          continue;
        }
        touched.insert(found->second.second);
        needed_bytes += static_cast<std::uint64_t>(eb);
        for (std::int64_t b = 0; b < eb; ++b) {
          const Source want{found->second.first.file, found->second.first.offset + b};
          ASSERT_EQ(memory[at + static_cast<std::uint64_t>(b)], want)
              << n.name << " element " << k << " of rank " << rank;
        }
      }
    }
    EXPECT_EQ(plan.bytes_needed, needed_bytes);
    EXPECT_EQ(plan.padding_bytes, padding_bytes);
    std::uint64_t padding_listed = 0;
    for (const PaddingRun& p : plan.padding) padding_listed += p.bytes;
    EXPECT_EQ(padding_listed, padding_bytes);
    if (mode == ReshardRead::exact) {
      EXPECT_EQ(plan.bytes_read, needed_bytes) << "exact reads read what is needed, no more";
    } else {
      std::uint64_t whole = 0;
      for (const StoredPiece* p : touched) whole += p->geometry.bytes();
      EXPECT_EQ(plan.bytes_read, whole) << "whole_items reads every touched stored piece once, whole";
    }
  }
}

ModelSpec small_model(std::mt19937_64& rng, bool moe) {
  auto pick = [&](std::initializer_list<std::int64_t> values) {
    std::vector<std::int64_t> v(values);
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  ModelSpec m;
  m.name = "reshard-test";
  m.num_attention_heads = 8;
  m.num_key_value_heads = 8;  // every TP of the grids below (1..8) takes whole KV heads
  m.head_dim = 4;
  m.hidden_size = 32;
  m.intermediate_size = pick({32, 64});
  m.num_hidden_layers = 8;
  m.vocab_size = pick({100, 131, 256});
  m.tie_word_embeddings = pick({0, 1}) == 1;
  if (moe) {
    m.num_local_experts = 4;
    m.num_experts_per_tok = 2;
  }
  return m;
}

ParallelSpec random_grid(std::mt19937_64& rng, bool moe) {
  auto pick = [&](std::initializer_list<std::int64_t> values) {
    std::vector<std::int64_t> v(values);
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
  };
  ParallelSpec p;
  p.tp = pick({1, 2, 4, 8});
  p.pp = pick({1, 2, 4, 8});
  p.dp = pick({1, 2, 3, 4});
  p.ep = moe ? (p.dp % 2 == 0 ? pick({1, 2}) : 1) : 1;
  p.zero_stage = static_cast<int>(pick({0, 1, 2, 3}));
  p.vocab_divisor = pick({1, 8});
  return p;
}

TEST(ReshardPlan, MatchesTheBruteForceOracleOverRandomGridPairs) {
  std::mt19937_64 rng(20261201);
  StateSpec full;
  StateSpec weights;
  weights.scope = workloads::StateScope::weights;
  int pairs = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const bool moe = trial % 4 == 3;
    const ModelSpec model = small_model(rng, moe);
    const StateSpec& state = trial % 3 == 0 ? weights : full;
    const ParallelSpec a = random_grid(rng, moe);
    const ParallelSpec b = random_grid(rng, moe);
    const Layout writer(model, a, state);
    const Layout reader(model, b, state);
    SCOPED_TRACE("tp/pp/dp/ep/zero " + std::to_string(a.tp) + "/" + std::to_string(a.pp) + "/" +
                 std::to_string(a.dp) + "/" + std::to_string(a.ep) + "/" + std::to_string(a.zero_stage) + " -> " +
                 std::to_string(b.tp) + "/" + std::to_string(b.pp) + "/" + std::to_string(b.dp) + "/" +
                 std::to_string(b.ep) + "/" + std::to_string(b.zero_stage));
    check_pair(writer, reader, 1, trial % 2 == 0 ? ReshardRead::exact : ReshardRead::whole_items);
    if (HasFatalFailure()) return;
    ++pairs;
  }
  EXPECT_EQ(pairs, 24);
}

TEST(ReshardPlan, ScaledTensorsReshardExactlyWhenTheScaleDividesTheLeadingDimensions) {
  std::mt19937_64 rng(7);
  ModelSpec model = small_model(rng, false);
  model.vocab_size = 256;
  ParallelSpec a;
  a.tp = 4;
  a.pp = 2;
  a.dp = 2;
  a.zero_stage = 1;
  a.vocab_divisor = 1;
  ParallelSpec b = a;
  b.tp = 2;
  b.pp = 4;
  b.dp = 3;
  const Layout writer(model, a, StateSpec{});
  const Layout reader(model, b, StateSpec{});
  check_pair(writer, reader, 2, ReshardRead::exact);
  check_pair(writer, reader, 4, ReshardRead::whole_items);
}

TEST(ReshardPlan, TwoTensorParallelChunksOfOneStageAreTwoWholeItemsWithoutAmplification) {
  // TP8×PP4 -> TP4×PP8 (issue 15): new rank (t', p') reads old chunks 2t' and 2t'+1.
  std::mt19937_64 rng(3);
  ModelSpec model = small_model(rng, false);
  model.vocab_size = 256;
  ParallelSpec a;
  a.tp = 8;
  a.pp = 4;
  a.vocab_divisor = 1;
  ParallelSpec b = a;
  b.tp = 4;
  b.pp = 8;
  StateSpec weights;
  weights.scope = workloads::StateScope::weights;
  const Layout writer(model, a, weights);
  const Layout reader(model, b, weights);
  const Stored stored = store(writer, 1);
  std::uint64_t exact_read = 0, whole_read = 0, needed = 0;
  for (std::int64_t rank = 0; rank < reader.world_size(); ++rank) {
    std::uint64_t bytes = 0;
    const auto shards = needed_of(reader, rank, 1, bytes);
    const RankReadPlan exact = plan_rank_reads(shards, stored.pieces, ReshardRead::exact, bytes, 1);
    const RankReadPlan whole = plan_rank_reads(shards, stored.pieces, ReshardRead::whole_items, bytes, 1);
    exact_read += exact.bytes_read;
    whole_read += whole.bytes_read;
    needed += exact.bytes_needed;
  }
  EXPECT_EQ(exact_read, needed);
  EXPECT_EQ(whole_read, needed) << "every touched stored piece is wholly needed";
  // TP4 -> TP8 the other way: whole_items reads each stored chunk for two ranks, twice the bytes
  // of the split tensors.
  const Stored back = store(reader, 1);
  std::uint64_t exact_back = 0, whole_back = 0;
  for (std::int64_t rank = 0; rank < writer.world_size(); ++rank) {
    std::uint64_t bytes = 0;
    const auto shards = needed_of(writer, rank, 1, bytes);
    exact_back += plan_rank_reads(shards, back.pieces, ReshardRead::exact, bytes, 1).bytes_read;
    whole_back += plan_rank_reads(shards, back.pieces, ReshardRead::whole_items, bytes, 1).bytes_read;
  }
  EXPECT_GT(whole_back, exact_back);
  EXPECT_LE(whole_back, 2 * exact_back);
}

TEST(ReshardPlan, RefusesStateTheCheckpointNeverStored) {
  std::mt19937_64 rng(5);
  const ModelSpec model = small_model(rng, false);
  ParallelSpec p;
  p.tp = 2;
  StateSpec weights;
  weights.scope = workloads::StateScope::weights;
  const Stored stored = store(Layout(model, p, weights), 1);
  std::uint64_t bytes = 0;
  const auto needed = needed_of(Layout(model, p, StateSpec{}), 0, 1, bytes);
  try {
    (void)plan_rank_reads(needed, stored.pieces, ReshardRead::exact, bytes, 1);
    FAIL() << "restoring optimizer state from a weights-only checkpoint must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("stores no piece of it"), std::string::npos) << e.what();
  }
}

TEST(ReshardPlan, RefusesElementsNoWrittenRankStored) {
  std::mt19937_64 rng(6);
  const ModelSpec model = small_model(rng, false);
  ParallelSpec a;
  a.tp = 4;
  ParallelSpec b;
  b.tp = 2;
  Stored stored = store(Layout(model, a, StateSpec{}), 1);
  for (auto& [id, list] : stored.pieces) {
    std::erase_if(list, [](const StoredPiece& piece) { return piece.file == "r1"; });  // rank 1 never written
  }
  std::uint64_t bytes = 0;
  const auto needed = needed_of(Layout(model, b, StateSpec{}), 0, 1, bytes);
  try {
    (void)plan_rank_reads(needed, stored.pieces, ReshardRead::exact, bytes, 1);
    FAIL() << "a needed element the checkpoint lacks must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("is stored in no piece"), std::string::npos) << e.what();
  }
}

TEST(ReshardPlan, RefusesTensorsTheScaleDoesNotShrinkExactly) {
  std::mt19937_64 rng(8);
  ModelSpec model = small_model(rng, false);
  model.vocab_size = 100;
  ParallelSpec a;
  a.tp = 2;
  a.vocab_divisor = 1;
  ParallelSpec b;
  b.vocab_divisor = 1;
  StateSpec weights;
  weights.scope = workloads::StateScope::weights;
  const Stored stored = store(Layout(model, a, weights), 3);  // 3 divides no leading dimension here
  std::uint64_t bytes = 0;
  const auto needed = needed_of(Layout(model, b, weights), 0, 3, bytes);
  try {
    (void)plan_rank_reads(needed, stored.pieces, ReshardRead::exact, bytes, 1);
    FAIL() << "inexactly scaled tensors must be refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("model.scale"), std::string::npos) << e.what();
  }
}

TEST(ShardGeometry, RowParallelSlicesAreOneRunPerRowAtTheirGlobalColumns) {
  ShardGeometry g;
  g.global_shape = {3, 8};
  g.offset = {0, 4};
  g.extent = {3, 4};
  g.flat_begin = 2;
  g.flat_end = 11;
  const std::vector<GlobalRun> runs = global_runs(g);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].local, 0);
  EXPECT_EQ(runs[0].global, 6);
  EXPECT_EQ(runs[0].elements, 2);
  EXPECT_EQ(runs[1].global, 12);
  EXPECT_EQ(runs[1].elements, 4);
  EXPECT_EQ(runs[2].local, 6);
  EXPECT_EQ(runs[2].global, 20);
  EXPECT_EQ(runs[2].elements, 3);
  EXPECT_EQ(global_index_text(g.global_shape, 21), "[2, 5]");
}

}  // namespace
}  // namespace ckpt::harness
