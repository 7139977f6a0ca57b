// ZeRO-3 sharded per tensor (parallel.zero_sharding = "per_tensor") against what
// torch.distributed.checkpoint 2.15 saved of a model sharded by FSDP2's fully_shard:
// tests/data/dcp/fsdp2/dcp_fsdp2.jsonl (tests/data/dcp/measure_fsdp2.py) holds every chunk's
// tensor, offsets, sizes, file and data bytes, and the .metadata's size, for two Llama-shaped
// models (config.json files beside it) over 2 and 4 processes.
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
#include "workloads/layout.hpp"
#include "workloads/spec_error.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

const fs::path kFsdp2Data = fs::path(CKPT_SOURCE_DIR) / "tests/data/dcp/fsdp2";

std::vector<nlohmann::json> measured_saves() {
  std::ifstream in(kFsdp2Data / "dcp_fsdp2.jsonl");
  std::vector<nlohmann::json> saves;
  for (std::string line; std::getline(in, line);) saves.push_back(nlohmann::json::parse(line));
  return saves;
}

// The case FSDP2's save is: weights in bf16 with Hugging Face's names, ZeRO-3 per tensor over
// `dp`, DCP's directory with one file per process.
Case fsdp2_case(const std::string& model, std::int64_t dp) {
  Case c;
  c.model = load_model_hf_json(kFsdp2Data / (model + ".json"));
  c.parallel.dp = dp;
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

TEST(PerTensorSharding, ChunksAndDataBytesAreThoseFsdp2Saved) {
  const std::vector<nlohmann::json> saves = measured_saves();
  ASSERT_EQ(saves.size(), 4u);
  for (const nlohmann::json& save : saves) {
    const std::string what =
        save["model"].get<std::string>() + " on " + save["processes"].dump() + " processes";
    const Planned ours = plan_world(
        fsdp2_case(save["model"].get<std::string>(), save["processes"].get<std::int64_t>()));
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
    EXPECT_EQ(ours.chunks, theirs) << what;
    EXPECT_EQ(ours.data_bytes, their_bytes) << what;
  }
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
  for (const nlohmann::json& save : measured_saves()) {
    const Case c =
        fsdp2_case(save["model"].get<std::string>(), save["processes"].get<std::int64_t>());
    const std::vector<CoordinatorFile> files = coordinator_files(c, plan_world(c).items);
    ASSERT_EQ(files.size(), 1u);
    const double ours = static_cast<double>(files.front().text.size());
    const double theirs = save["files"][".metadata"].get<double>();
    EXPECT_NEAR(ours, theirs, 0.1 * theirs)
        << save["model"] << " on " << save["processes"] << " processes";
  }
}

TEST(PerTensorSharding, OnlyZeroThreeShardsPerTensor) {
  Case c = fsdp2_case("odd", 2);
  c.parallel.zero_stage = 1;
  try {
    const workloads::Layout layout(c.model, c.parallel, c.state);
    ADD_FAILURE() << "ZeRO-1 with per-tensor sharding was accepted";
  } catch (const workloads::SpecError& e) {
    EXPECT_EQ(e.key(), "zero_sharding");
    EXPECT_NE(std::string(e.what()).find("set zero = 3"), std::string::npos) << e.what();
  }
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

}  // namespace
}  // namespace ckpt::harness
