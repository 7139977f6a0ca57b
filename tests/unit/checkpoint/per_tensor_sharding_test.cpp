// ZeRO-3 sharded per tensor (parallel.zero_sharding = "per_tensor") against what
// torch.distributed.checkpoint 2.15 saved of a model sharded by FSDP2's fully_shard:
// tests/data/dcp/fsdp2/dcp_fsdp2.jsonl (tests/data/dcp/measure_fsdp2.py) holds every chunk's
// tensor, offsets, sizes, file and data bytes, and the .metadata's size, for two Llama-shaped
// models (config.json files beside it) over 2 and 4 processes; dcp_fsdp2_tp.jsonl
// (measure_fsdp2_tp.py) the same for FSDP2 over TP as torchtitan applies them, on (dp, tp)
// meshes of 2 × 2, 4 × 2 and 2 × 4 processes.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "harness/checkpoint/dcp_metadata.hpp"
#include "harness/models/model_file.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/workloads/spec_error_expect.hpp"
#include "workloads/layout.hpp"
#include "workloads/layout_summary.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

const fs::path kFsdp2Data = fs::path(CKPT_SOURCE_DIR) / "tests/data/dcp/fsdp2";

// The saves of `file`; a save at TP 1 lists its processes alone, which are its DP ranks.
std::vector<nlohmann::json> measured_saves(const std::string& file = "dcp_fsdp2.jsonl") {
  std::ifstream in(kFsdp2Data / file);
  std::vector<nlohmann::json> saves;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json save = nlohmann::json::parse(line);
    if (!save.contains("tp")) {
      save["tp"] = 1;
      save["dp"] = save["processes"];
    }
    saves.push_back(std::move(save));
  }
  return saves;
}

std::string describe(const nlohmann::json& save) {
  return save["model"].get<std::string>() + " at DP " + save["dp"].dump() + " x TP " +
         save["tp"].dump();
}

// The case FSDP2's save is: weights in bf16 with Hugging Face's names, ZeRO-3 per tensor over
// `dp` (after TP's split over `tp`), DCP's directory with one file per process.
Case fsdp2_case(const std::string& model, std::int64_t dp, std::int64_t tp = 1) {
  Case c;
  c.model = load_model_hf_json(kFsdp2Data / (model + ".json"));
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  c.parallel.zero_stage = 3;
  c.parallel.zero_sharding = workloads::ZeroSharding::per_tensor;
  c.state.scope = workloads::StateScope::weights;
  c.directory_layout = DirectoryLayout::dcp;
  c.mapping = Mapping::file_per_rank;
  return c;
}

// A chunk as DCP's metadata lists it: tensor, offsets and sizes in the global tensor, file.
using Chunk =
    std::tuple<std::string, std::vector<std::int64_t>, std::vector<std::int64_t>, std::string>;

// A per-tensor shard is whole rows of its slice: its chunk starts at the slice's offset plus the
// rows before flat_begin.
Chunk chunk_of(const workloads::Shard& s, const std::string& file) {
  std::int64_t row = 1;
  for (std::size_t d = 1; d < s.extent.size(); ++d) row *= s.extent[d];
  std::vector<std::int64_t> offsets = s.offset;
  std::vector<std::int64_t> sizes = s.extent;
  offsets[0] += s.flat_begin / row;
  sizes[0] = (s.flat_end - s.flat_begin) / row;
  return {s.name, offsets, sizes, file};
}

struct Planned {
  std::set<Chunk> chunks;
  std::map<std::string, std::uint64_t> data_bytes;  // per file
  std::vector<ManifestTensor> items;                // what the coordinator gets
};

Planned plan_world(const Case& c) {
  const workloads::Layout layout(c.model, c.parallel, c.state);
  Planned out;
  for (std::int64_t rank = 0; rank < layout.world_size(); ++rank) {
    const std::vector<RankPlan> plans = plan_ranks(layout, c, {rank}, {});
    for (const PlacedShard& ps : plans.front().shards) {
      out.chunks.insert(chunk_of(ps.shard, ps.file));
      out.data_bytes[ps.file] += ps.bytes;
      out.items.push_back({.shard = ps.shard, .rank = rank, .file = ps.file});
    }
    for (const workloads::Shard& s : layout.empty_chunks(rank))
      out.chunks.insert(chunk_of(s, "__" + std::to_string(rank) + "_0.distcp"));
  }
  return out;
}

Case case_of(const nlohmann::json& save) {
  return fsdp2_case(save["model"].get<std::string>(), save["dp"].get<std::int64_t>(),
                    save["tp"].get<std::int64_t>());
}

void expect_chunks_and_data_bytes_of(const std::vector<nlohmann::json>& saves) {
  for (const nlohmann::json& save : saves) {
    const Planned ours = plan_world(case_of(save));
    std::set<Chunk> theirs;
    std::map<std::string, std::uint64_t> their_bytes;
    for (const nlohmann::json& chunk : save["chunks"]) {
      const auto file = chunk["file"].get<std::string>();
      theirs.insert({chunk["name"].get<std::string>(),
                     chunk["offsets"].get<std::vector<std::int64_t>>(),
                     chunk["sizes"].get<std::vector<std::int64_t>>(), file});
      if (chunk["data_bytes"].get<std::uint64_t>() > 0)
        their_bytes[file] += chunk["data_bytes"].get<std::uint64_t>();
    }
    EXPECT_EQ(ours.chunks, theirs) << describe(save);
    EXPECT_EQ(ours.data_bytes, their_bytes) << describe(save);
  }
}

TEST(PerTensorSharding, ChunksAndDataBytesAreThoseFsdp2Saved) {
  const std::vector<nlohmann::json> saves = measured_saves();
  ASSERT_EQ(saves.size(), 4u);
  expect_chunks_and_data_bytes_of(saves);
}

// TP splits a slice off each tensor first and FSDP2 cuts the slice's dim 0 (a strided shard
// where TP cut dim 0 too); DCP saves a chunk that every TP rank holds (a norm's, an empty one)
// on the rank its deduplication picks.
TEST(PerTensorSharding, ChunksAndDataBytesAreThoseFsdp2OverTpSaved) {
  const std::vector<nlohmann::json> saves = measured_saves("dcp_fsdp2_tp.jsonl");
  ASSERT_EQ(saves.size(), 5u);
  expect_chunks_and_data_bytes_of(saves);
}

TEST(PerTensorSharding, RankPastTheLastRowHasAnEmptyChunkAndNoBytes) {
  // odd.json's k_proj has 6 rows: torch.chunk over 4 gives 2, 2, 2 and none.
  const Case c = fsdp2_case("odd", 4);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const std::vector<workloads::Shard> empty = layout.empty_chunks(3);
  std::set<std::string> names;
  for (const workloads::Shard& s : empty) names.insert(s.name);
  EXPECT_EQ(names, (std::set<std::string>{"model.layers.0.self_attn.k_proj.weight",
                                          "model.layers.0.self_attn.v_proj.weight",
                                          "model.layers.1.self_attn.k_proj.weight",
                                          "model.layers.1.self_attn.v_proj.weight"}));
  for (const workloads::Shard& s : empty) EXPECT_EQ(s.flat_begin, 72) << s.name;  // 6 rows of 12
  for (const workloads::Shard& s : layout.shards(3)) EXPECT_GT(s.bytes, 0) << s.name;
  EXPECT_TRUE(layout.empty_chunks(2).empty());
  // bf16: the 37-row tables in chunks of 10 rows, rank 3 the last 7; the five 12-element norms
  // 3 each; per layer q_proj and o_proj 3 rows of 12, gate_proj and up_proj 5 of 12, down_proj 3
  // of 20.
  EXPECT_EQ(layout.totals(3).bytes,
            (2 * 7 * 12 + 5 * 3 + 2 * (3 * 12 + 3 * 12 + 5 * 12 + 5 * 12 + 3 * 20)) * 2);
  EXPECT_EQ(layout.totals(3).tensors, 21 - 4);
}

TEST(PerTensorSharding, MetadataSizeIsWithinTenPercentOfFsdp2s) {
  std::vector<nlohmann::json> saves = measured_saves();
  for (nlohmann::json& save : measured_saves("dcp_fsdp2_tp.jsonl")) saves.push_back(save);
  for (const nlohmann::json& save : saves) {
    const Case c = case_of(save);
    const std::vector<CoordinatorFile> files = coordinator_files(c, plan_world(c).items);
    ASSERT_EQ(files.size(), 1u);
    const double ours = static_cast<double>(files.front().text.size());
    const double theirs = save["files"][".metadata"].get<double>();
    EXPECT_NEAR(ours, theirs, 0.1 * theirs) << describe(save);
  }
}

TEST(PerTensorSharding, OnlyZeroThreeShardsPerTensor) {
  Case c = fsdp2_case("odd", 2);
  c.parallel.zero_stage = 1;
  workloads::expect_spec_error([&] { workloads::Layout(c.model, c.parallel, c.state); },
                               "zero_sharding", {"set zero = 3"});
}

TEST(PerTensorSharding, OnlyTheDcpLayoutSavesIt) {
  Case c = fsdp2_case("odd", 2);
  EXPECT_EQ(per_tensor_sharding_refusal(c), "");
  for (const DirectoryLayout layout :
       {DirectoryLayout::megatron, DirectoryLayout::megatron_dist, DirectoryLayout::deepspeed}) {
    c.directory_layout = layout;
    const std::string why = per_tensor_sharding_refusal(c);
    EXPECT_NE(why.find("set strategy.layout = \"dcp\", or parallel.zero_sharding = \"flat\""),
              std::string::npos)
        << why;
  }
  c.parallel.zero_sharding = workloads::ZeroSharding::flat;
  EXPECT_EQ(per_tensor_sharding_refusal(c), "");
}

std::set<std::string> names_of(const std::vector<workloads::Shard>& shards) {
  std::set<std::string> names;
  for (const workloads::Shard& s : shards) names.insert(s.name);
  return names;
}

TEST(PerTensorSharding, TpReplicatedChunksGoToTheLeastLoadedTpRank) {
  // uneven.json at DP 2 x TP 4: TP rank 0 has planned its embedding chunk before the first norm,
  // so DCP gives the five norms' chunks of each DP group to TP ranks 1, 2, 3, 1, 2 in turn.
  const Case c = fsdp2_case("uneven", 2, 4);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const auto norms_of = [&](std::int64_t rank) {
    std::set<std::string> norms;
    for (const std::string& name : names_of(layout.shards(rank)))
      if (name.find("norm") != std::string::npos) norms.insert(name);
    return norms;
  };
  for (const std::int64_t group : {0, 4}) {
    EXPECT_EQ(norms_of(group), std::set<std::string>{});
    EXPECT_EQ(norms_of(group + 1),
              (std::set<std::string>{"model.layers.0.input_layernorm.weight",
                                     "model.layers.1.post_attention_layernorm.weight"}));
    EXPECT_EQ(norms_of(group + 2),
              (std::set<std::string>{"model.layers.0.post_attention_layernorm.weight",
                                     "model.norm.weight"}));
    EXPECT_EQ(norms_of(group + 3), std::set<std::string>{"model.layers.1.input_layernorm.weight"});
  }
  // bf16, DP group 0: the 15-row TP slices of the 60-row tables in chunks of 8 rows of 12; per
  // layer q/k/v 3-row slices in chunks of 2 rows of 12, o_proj 6 of its 12 rows of 3 columns,
  // gate/up 11-row slices in chunks of 6 rows of 12, down_proj 6 of 12 rows of 11 columns; a norm
  // chunk 6 of 12 elements.
  const std::int64_t own = 2 * 8 * 12 + 2 * (3 * 2 * 12 + 6 * 3 + 2 * 6 * 12 + 6 * 11);
  EXPECT_EQ(layout.totals(0).bytes, own * 2);
  EXPECT_EQ(layout.totals(1).bytes, (own + 2 * 6) * 2);
  EXPECT_EQ(layout.totals(3).bytes, (own + 6) * 2);
  EXPECT_EQ(layout.totals(1).tensors, 16 + 2);
}

TEST(PerTensorSharding, EmptyChunkOfAStridedShardIsSavedOnceAtTheTensorsEnd) {
  // uneven.json at DP 4 x TP 2: a 6-row TP slice of the 12-row q/k/v projections in chunks of 2
  // rows leaves DP rank 3 empty in both TP slices; torch puts both empty chunks at row 12, so
  // DCP saves one, on TP rank 1 (TP rank 0 has planned its own chunks before it).
  const Case c = fsdp2_case("uneven", 4, 2);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  EXPECT_TRUE(layout.empty_chunks(6).empty());
  const std::vector<workloads::Shard> empty = layout.empty_chunks(7);
  std::set<std::string> expected;
  for (const char* layer : {"0", "1"}) {
    for (const char* proj : {"q", "k", "v"})
      expected.insert(std::string("model.layers.") + layer + ".self_attn." + proj + "_proj.weight");
  }
  EXPECT_EQ(names_of(empty), expected);
  for (const workloads::Shard& s : empty) {
    EXPECT_EQ(s.global_shape, (std::vector<std::int64_t>{12, 12})) << s.name;
    EXPECT_EQ(s.offset, (std::vector<std::int64_t>{6, 0})) << s.name;
    EXPECT_EQ(s.flat_begin, 72) << s.name;  // after the slice's 6 rows of 12: row 12
    EXPECT_EQ(s.flat_end, 72) << s.name;
  }
}

TEST(PerTensorSharding, TheVocabularyIsNotPaddedAtTp) {
  Case c = fsdp2_case("uneven", 2, 2);
  EXPECT_EQ(workloads::Layout(c.model, c.parallel, c.state).padded_vocab(), 60);
  c.model.vocab_size = 61;
  workloads::expect_spec_error(
      [&] { workloads::Layout(c.model, c.parallel, c.state); }, "tp",
      {"vocab_size (61) is not divisible by tp (2)", "use a tp that divides vocab_size"});
}

TEST(PerTensorSharding, WorldSummaryCountsEveryTpRanksReplicas) {
  // The per-rank data bytes of the DP 2 x TP 4 save: 1,296 (TP rank 0 of DP rank 1) to 1,608.
  const Case c = fsdp2_case("uneven", 2, 4);
  const workloads::WorldSummary summary =
      workloads::summarize(workloads::Layout(c.model, c.parallel, c.state));
  EXPECT_EQ(summary.rank_bytes.min, 1296);
  EXPECT_EQ(summary.rank_bytes.max, 1608);
  EXPECT_EQ(summary.shards, 138);
  EXPECT_EQ(summary.writing_ranks, 8);
}

}  // namespace
}  // namespace ckpt::harness
