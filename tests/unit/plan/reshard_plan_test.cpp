// The resharding planner against a brute-force oracle: over random pairs of parallel grids, every
// needed element is read exactly once, from where the writer put it, and bytes read are exactly
// the needed bytes plus the file gaps restore.gap_bytes bridges (exact) or the whole stored pieces
// touched, their framing included (whole_items); under backend.direct every request is aligned.
#include "harness/plan/reshard_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

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

Stored store(const Layout& layout, std::int64_t scale, bool framed = true) {
  Stored out;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    const std::string file = "r" + std::to_string(rank);
    out.file_ids[file] = rank;
    std::uint64_t at = 7;  // files start with some other bytes
    for (const Shard& s : layout.shards(rank)) {
      // Gaps of 3 bytes between pieces: 2 of framing before each piece, 1 after it (as
      // torch.save's archive around a DCP item, which whole_items reads with it).
      StoredPiece piece{file, at, shard_geometry(s, scale), framed ? 2u : 0u, framed ? 1u : 0u};
      if (piece.geometry.elements() <= 0) continue;
      at += piece.geometry.bytes() + 3;
      out.pieces[{s.state, s.name}].push_back(piece);
    }
  }
  for (auto& [id, list] : out.pieces) {
    for (const StoredPiece& piece : list) {
      for (std::int64_t k = 0; k < piece.geometry.elements(); ++k) {
        const auto offset =
            static_cast<std::int64_t>(piece.file_offset) + k * piece.geometry.element_bytes;
        const bool fresh =
            out.where[id]
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
  for (const ByteRange& r : plan.requests) {
    const std::int64_t file = stored.file_ids.at(plan.files.at(r.file));
    for (std::uint64_t b = 0; b < r.length; ++b) {
      Source& tag = memory.at(r.memory_offset + b);
      EXPECT_EQ(tag.file, -1) << "byte " << r.memory_offset + b << " read twice";
      tag = {file, static_cast<std::int64_t>(r.file_offset + b)};
    }
  }
  for (const BufferCopy& c : plan.copies) {
    for (std::uint64_t b = 0; b < c.length; ++b) memory.at(c.to + b) = memory.at(c.from + b);
  }
  return memory;
}

// How often the requests of `plan` read each byte of each file.
std::map<std::int64_t, std::vector<int>> file_byte_reads(const RankReadPlan& plan,
                                                         const Stored& stored) {
  std::map<std::int64_t, std::vector<int>> reads;
  for (const ByteRange& r : plan.requests) {
    std::vector<int>& counts = reads[stored.file_ids.at(plan.files.at(r.file))];
    if (counts.size() < r.file_offset + r.length) counts.resize(r.file_offset + r.length);
    for (std::uint64_t b = 0; b < r.length; ++b) ++counts[r.file_offset + b];
  }
  return reads;
}

// The file gaps of at most `gap_bytes` between the needed elements of one shard in one stored
// piece (`stored_elements`: their indices in the piece): what gap coalescing reads and drops.
std::uint64_t bridged_gap_bytes(std::vector<std::int64_t> stored_elements,
                                std::int64_t element_bytes, std::uint64_t gap_bytes) {
  std::sort(stored_elements.begin(), stored_elements.end());
  std::uint64_t bridged = 0;
  for (std::size_t k = 1; k < stored_elements.size(); ++k) {
    const auto gap = static_cast<std::uint64_t>((stored_elements[k] - stored_elements[k - 1] - 1) *
                                                element_bytes);
    if (gap > 0 && gap <= gap_bytes) bridged += gap;
  }
  return bridged;
}

void check_pair(const Layout& writer, const Layout& reader, std::int64_t scale, ReshardRead mode,
                const ReadShaping& shaping = {}) {
  const Stored stored = store(writer, scale);
  for (std::int64_t rank = 0; rank < reader.world_size(); ++rank) {
    std::uint64_t shards_bytes = 0;
    const std::vector<NeededShard> needed = needed_of(reader, rank, scale, shards_bytes);
    const RankReadPlan plan =
        plan_rank_reads(needed, stored.pieces, mode, shards_bytes, 16, shaping);
    const std::vector<Source> memory = execute(plan, stored);
    const auto reads = file_byte_reads(plan, stored);
    std::uint64_t needed_bytes = 0;
    std::uint64_t padding_bytes = 0;
    std::uint64_t gap_bytes = 0;
    std::set<const StoredPiece*> touched;
    for (const NeededShard& n : needed) {
      std::map<const StoredPiece*, std::vector<std::int64_t>> from_piece;
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
        const StoredPiece* piece = found->second.second;
        touched.insert(piece);
        from_piece[piece].push_back(
            (found->second.first.offset - static_cast<std::int64_t>(piece->file_offset)) / eb);
        needed_bytes += static_cast<std::uint64_t>(eb);
        for (std::int64_t b = 0; b < eb; ++b) {
          const Source want{found->second.first.file, found->second.first.offset + b};
          ASSERT_EQ(memory[at + static_cast<std::uint64_t>(b)], want)
              << n.name << " element " << k << " of rank " << rank;
          if (mode == ReshardRead::exact && shaping.direct_alignment == 0) {
            ASSERT_EQ(reads.at(want.file).at(static_cast<std::size_t>(want.offset)), 1)
                << n.name << " element " << k << " of rank " << rank
                << ": a needed byte read more than once";
          }
        }
      }
      for (const auto& [piece, elements] : from_piece) {
        gap_bytes += bridged_gap_bytes(elements, n.geometry.element_bytes, shaping.gap_bytes);
      }
    }
    EXPECT_EQ(plan.bytes_needed, needed_bytes);
    EXPECT_EQ(plan.padding_bytes, padding_bytes);
    std::uint64_t padding_listed = 0;
    for (const PaddingRun& p : plan.padding) padding_listed += p.bytes;
    EXPECT_EQ(padding_listed, padding_bytes);
    if (shaping.direct_alignment > 0) {
      std::uint64_t total = 0;
      for (const ByteRange& r : plan.requests) {
        EXPECT_EQ(r.file_offset % shaping.direct_alignment, 0u);
        EXPECT_EQ(r.length % shaping.direct_alignment, 0u);
        EXPECT_EQ(r.memory_offset % shaping.direct_alignment, 0u);
        total += r.length;
      }
      EXPECT_EQ(plan.bytes_read, total);
      EXPECT_GE(plan.bytes_read, needed_bytes + gap_bytes);
    } else if (mode == ReshardRead::exact) {
      EXPECT_EQ(plan.bytes_read, needed_bytes + gap_bytes)
          << "exact reads read what is needed and the gaps restore.gap_bytes bridges, no more";
      std::uint64_t read_once = 0;
      for (const auto& [file, counts] : reads) {
        for (const int count : counts) {
          EXPECT_LE(count, 1) << "file " << file << ": a byte read twice";
          read_once += count == 1 ? 1 : 0;
        }
      }
      EXPECT_EQ(read_once, needed_bytes + gap_bytes);
    } else {
      std::uint64_t whole = 0;
      for (const StoredPiece* p : touched)
        whole += p->framing_before + p->geometry.bytes() + p->framing_after;
      EXPECT_EQ(plan.bytes_read, whole)
          << "whole_items reads every touched stored piece once, whole, with its framing";
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
                 std::to_string(a.dp) + "/" + std::to_string(a.ep) + "/" +
                 std::to_string(a.zero_stage) + " -> " + std::to_string(b.tp) + "/" +
                 std::to_string(b.pp) + "/" + std::to_string(b.dp) + "/" + std::to_string(b.ep) +
                 "/" + std::to_string(b.zero_stage));
    // Exact trials bridge no gap, small gaps or every gap; every third pair of trials reads
    // with O_DIRECT alignment.
    ReadShaping shaping;
    constexpr std::uint64_t kGaps[] = {0, 48, 1u << 20};
    if (trial % 2 == 0) shaping.gap_bytes = kGaps[(trial / 2) % 3];
    if ((trial / 2) % 3 == 1) shaping.direct_alignment = 32;
    SCOPED_TRACE("gap_bytes " + std::to_string(shaping.gap_bytes) + ", direct_alignment " +
                 std::to_string(shaping.direct_alignment));
    check_pair(writer, reader, 1, trial % 2 == 0 ? ReshardRead::exact : ReshardRead::whole_items,
               shaping);
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
  // TP8×PP4 -> TP4×PP8: new rank (t', p') reads old chunks 2t' and 2t'+1.
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
  const Stored stored = store(writer, 1, false);  // the tensors' bytes alone
  std::uint64_t exact_read = 0, whole_read = 0, needed = 0;
  for (std::int64_t rank = 0; rank < reader.world_size(); ++rank) {
    std::uint64_t bytes = 0;
    const auto shards = needed_of(reader, rank, 1, bytes);
    const RankReadPlan exact = plan_rank_reads(shards, stored.pieces, ReshardRead::exact, bytes, 1);
    const RankReadPlan whole =
        plan_rank_reads(shards, stored.pieces, ReshardRead::whole_items, bytes, 1);
    exact_read += exact.bytes_read;
    whole_read += whole.bytes_read;
    needed += exact.bytes_needed;
  }
  EXPECT_EQ(exact_read, needed);
  EXPECT_EQ(whole_read, needed) << "every touched stored piece is wholly needed";
  // TP4 -> TP8 the other way: whole_items reads each stored chunk for two ranks, twice the bytes
  // of the split tensors.
  const Stored back = store(reader, 1, false);
  std::uint64_t exact_back = 0, whole_back = 0;
  for (std::int64_t rank = 0; rank < writer.world_size(); ++rank) {
    std::uint64_t bytes = 0;
    const auto shards = needed_of(writer, rank, 1, bytes);
    exact_back += plan_rank_reads(shards, back.pieces, ReshardRead::exact, bytes, 1).bytes_read;
    whole_back +=
        plan_rank_reads(shards, back.pieces, ReshardRead::whole_items, bytes, 1).bytes_read;
  }
  EXPECT_GT(whole_back, exact_back);
  EXPECT_LE(whole_back, 2 * exact_back);
}

// TP1 -> TP2 of a row-parallel [4, 8] bf16 tensor stored at byte 100: rank 0 needs the first
// half of each row, 8 bytes every 16.
struct RowHalves {
  StoredPieces stored;
  std::vector<NeededShard> needed;
  RowHalves() {
    ShardGeometry whole{{4, 8}, {0, 0}, {4, 8}, 0, 32, 2, true};
    stored[{StateKind::weight, "w"}].push_back({"f", 100, whole});
    ShardGeometry half{{4, 8}, {0, 0}, {4, 4}, 0, 16, 2, true};
    needed.push_back({"w", StateKind::weight, half, 0});
  }
  RankReadPlan plan(std::uint64_t gap_bytes, std::uint64_t direct_alignment) const {
    return plan_rank_reads(needed, stored, ReshardRead::exact, 32, 16,
                           {gap_bytes, direct_alignment});
  }
};

std::vector<std::uint64_t> offsets_and_lengths(const RankReadPlan& plan) {
  std::vector<std::uint64_t> out;
  for (const ByteRange& r : plan.requests) {
    out.push_back(r.file_offset);
    out.push_back(r.memory_offset);
    out.push_back(r.length);
  }
  return out;
}

TEST(ReshardPlan, GapBytesReadTheStridedHalvesOfARowParallelTensorAsOneRequest) {
  const RowHalves t;
  const RankReadPlan per_row = t.plan(0, 0);
  EXPECT_EQ(offsets_and_lengths(per_row),
            (std::vector<std::uint64_t>{100, 0, 8, 116, 8, 8, 132, 16, 8, 148, 24, 8}));
  EXPECT_EQ(per_row.bytes_read, 32u);
  EXPECT_TRUE(per_row.copies.empty());
  const RankReadPlan small_gap = t.plan(7, 0);  // the 8-byte gaps stay
  EXPECT_EQ(small_gap.requests.size(), 4u);
  const RankReadPlan bridged = t.plan(8, 0);
  EXPECT_EQ(offsets_and_lengths(bridged),
            (std::vector<std::uint64_t>{100, 32, 56}));  // into scratch at 32
  EXPECT_EQ(bridged.bytes_needed, 32u);
  EXPECT_EQ(bridged.bytes_read, 56u) << "3 gaps of 8 bytes read and dropped: amplification 1.75";
  ASSERT_EQ(bridged.copies.size(), 4u);
  EXPECT_EQ(bridged.copies[3].from, 32u + 48u);
  EXPECT_EQ(bridged.copies[3].to, 24u);
  EXPECT_EQ(bridged.buffer_bytes, 96u);
}

TEST(ReshardPlan, DirectReadsAlignEachRequestOutwardIntoScratch) {
  const RowHalves t;
  // Per row: each 8-byte half read as the 64-byte block holding it.
  const RankReadPlan per_row = t.plan(0, 64);
  EXPECT_EQ(offsets_and_lengths(per_row),
            (std::vector<std::uint64_t>{64, 64, 64, 64, 128, 64, 128, 192, 64, 128, 256, 64}));
  EXPECT_EQ(per_row.bytes_read, 256u);
  ASSERT_EQ(per_row.copies.size(), 4u);
  EXPECT_EQ(per_row.copies[0].from, 64u + 36u);  // byte 100 is byte 36 of block [64, 128)
  EXPECT_EQ(per_row.copies[0].to, 0u);
  EXPECT_EQ(per_row.copies[3].from, 256u + 20u);
  // Bridged: bytes [100, 156) aligned out to [64, 192), the copies out of the old scratch moved.
  const RankReadPlan bridged = t.plan(8, 64);
  EXPECT_EQ(offsets_and_lengths(bridged), (std::vector<std::uint64_t>{64, 128, 128}));
  EXPECT_EQ(bridged.bytes_read, 128u);
  EXPECT_EQ(bridged.bytes_needed, 32u);
  ASSERT_EQ(bridged.copies.size(), 4u);
  EXPECT_EQ(bridged.copies[0].from, 128u + 36u);
  EXPECT_EQ(bridged.copies[1].from, 128u + 36u + 16u);
  EXPECT_EQ(bridged.copies[1].to, 8u);
  EXPECT_EQ(bridged.buffer_bytes, 256u);
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
    std::erase_if(
        list, [](const StoredPiece& piece) { return piece.file == "r1"; });  // rank 1 never written
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
