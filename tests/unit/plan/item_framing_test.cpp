// strategy.framing: every item of a .distcp file as the whole archive torch.save writes for it,
// against the files torch.distributed.checkpoint 2.15 wrote (tests/data/dcp/fsdp2/: FSDP2 saves
// of two Llama-shaped models over 2 and 4 processes, empty chunks included, and FSDP2 over TP on
// (dp, tp) meshes of 2 x 2, 4 x 2 and 2 x 4 processes; metadata_sizes.jsonl:
// the same hidden-256 model saved by one process; megatron_metadata_sizes.jsonl: megatron-core's
// torch_dist saves of a GPT, megatron_gpt.json, at 2, 8 and 32 layers, TP 1 and 2, DP 1 to 8).
#include "harness/plan/item_framing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/models/model_file.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/json_lines.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

const fs::path kDcpData = fs::path(CKPT_SOURCE_DIR) / "tests/data/dcp";

using test_support::json_lines;

// FSDP2's save: bf16 weights with Hugging Face's names, ZeRO-3 per tensor over `dp` (none at
// DP 1) after TP's split over `tp`, one file per process, framing on.
Case framed_case(const std::string& model, std::int64_t dp, std::int64_t tp = 1) {
  Case c;
  c.model = load_model_hf_json(kDcpData / "fsdp2" / (model + ".json"));
  c.parallel.dp = dp;
  c.parallel.tp = tp;
  if (dp > 1) {
    c.parallel.zero_stage = 3;
    c.parallel.zero_sharding = workloads::ZeroSharding::per_tensor;
  }
  c.state.scope = workloads::StateScope::weights;
  c.framing = true;
  return c;
}

// Every file's size over the world's ranks, by its name.
std::map<std::string, std::uint64_t> file_sizes(const Case& c) {
  const workloads::Layout layout(c.model, c.parallel, c.state);
  std::map<std::string, std::uint64_t> sizes;
  for (const RankPlan& plan : plan_ranks(layout, c, selected_ranks(c, layout.world_size()), {})) {
    for (const backends::FilePlan& f : plan.io.files) sizes[f.path] = f.file_size;
  }
  return sizes;
}

// The .distcp files of a measured save, by name.
std::map<std::string, std::uint64_t> distcp_sizes(const nlohmann::json& save) {
  std::map<std::string, std::uint64_t> sizes;
  for (const auto& [file, bytes] : save["files"].items()) {
    if (file != ".metadata") sizes[file] = bytes.get<std::uint64_t>();
  }
  return sizes;
}

TEST(ItemFraming, DistcpFilesAreTheSizeFsdp2sSaveWrote) {
  const std::vector<nlohmann::json> saves = json_lines(kDcpData / "fsdp2" / "dcp_fsdp2.jsonl");
  ASSERT_EQ(saves.size(), 4u);
  for (const nlohmann::json& save : saves) {
    EXPECT_EQ(file_sizes(framed_case(save["model"].get<std::string>(),
                                     save["processes"].get<std::int64_t>())),
              distcp_sizes(save))
        << save["model"] << " on " << save["processes"] << " processes";
  }
}

// FSDP2 over TP (dcp_fsdp2_tp.jsonl): the norms' items, and the one archive of an empty chunk
// both TP slices share, in the file of the TP rank DCP's deduplication gave them.
TEST(ItemFraming, DistcpFilesAreTheSizeFsdp2OverTpWrote) {
  const std::vector<nlohmann::json> saves = json_lines(kDcpData / "fsdp2" / "dcp_fsdp2_tp.jsonl");
  ASSERT_EQ(saves.size(), 5u);
  for (const nlohmann::json& save : saves) {
    EXPECT_EQ(
        file_sizes(framed_case(save["model"].get<std::string>(), save["dp"].get<std::int64_t>(),
                               save["tp"].get<std::int64_t>())),
        distcp_sizes(save))
        << save["model"] << " at DP " << save["dp"] << " x TP " << save["tp"];
  }
}

TEST(ItemFraming, OneProcessesFileIsTheSizeDcpWrote) {
  // metadata_sizes.jsonl's first line: 2 layers, 1 process.
  const nlohmann::json save = json_lines(kDcpData / "metadata_sizes.jsonl").front();
  ASSERT_EQ(save["processes"], 1);
  EXPECT_EQ(file_sizes(framed_case("small", 1)),
            (std::map<std::string, std::uint64_t>{
                {"__0_0.distcp", save["distcp"]["__0_0.distcp"].get<std::uint64_t>()}}));
  EXPECT_EQ(save["distcp"]["__0_0.distcp"], 3418973);
}

TEST(ItemFraming, MegatronDistFilesAreTheSizeMegatronCoreWrote) {
  const std::vector<nlohmann::json> saves = json_lines(kDcpData / "megatron_metadata_sizes.jsonl");
  ASSERT_EQ(saves.size(), 10u);
  for (const nlohmann::json& save : saves) {
    Case c;
    c.model = load_model_hf_json(kDcpData / "megatron_gpt.json");
    c.model.num_hidden_layers = save["layers"].get<std::int64_t>();
    c.parallel.tp = save["tp"].get<std::int64_t>();
    c.parallel.dp = save["dp"].get<std::int64_t>();
    c.state.scope = workloads::StateScope::weights;
    c.state.naming = workloads::Naming::megatron;
    c.directory_layout = DirectoryLayout::megatron_dist;
    c.framing = true;
    std::map<std::string, std::uint64_t> theirs;
    std::uint64_t their_total = 0;
    for (const auto& [file, bytes] : save["files"].items()) {
      if (!file.ends_with(".distcp")) continue;
      theirs[file] = bytes.get<std::uint64_t>();
      their_total += theirs[file];
    }
    const std::map<std::string, std::uint64_t> ours = file_sizes(c);
    const std::string what = save.dump();
    if (c.parallel.tp == 1) {
      EXPECT_EQ(ours, theirs) << what;
      continue;
    }
    // At TP 2 the measuring script spread the TP-replicated norms over the whole world, where
    // Megatron's training (and ckptbench) spreads each over its DP group: the same items, one
    // norm's archive on another rank.
    std::uint64_t total = 0;
    for (const auto& [file, bytes] : ours) total += bytes;
    EXPECT_EQ(total, their_total) << what;
    EXPECT_EQ(ours.size(), theirs.size()) << what;
  }
}

// The framing's bytes and the tensors' tile each file: every byte is one or the other, once.
TEST(ItemFraming, FramingAndTensorsTileTheFileAndTheItemIsOneExtent) {
  for (const DirectoryLayout directory : {DirectoryLayout::dcp, DirectoryLayout::megatron_dist}) {
    Case c = framed_case("odd", 4);
    c.directory_layout = directory;
    if (directory == DirectoryLayout::megatron_dist) {
      c.parallel.zero_sharding = workloads::ZeroSharding::flat;
    }
    const workloads::Layout layout(c.model, c.parallel, c.state);
    for (const RankPlan& plan : plan_ranks(layout, c, {0, 3}, {})) {
      std::map<std::uint64_t, std::uint64_t> pieces;  // memory offset -> bytes
      for (const PlacedShard& ps : plan.shards) pieces[ps.memory_offset] = ps.bytes;
      for (const FileHeader& h : plan.headers) pieces[h.memory_offset] += h.bytes.size();
      std::uint64_t at = 0;
      for (const auto& [offset, bytes] : pieces) {
        EXPECT_EQ(offset, at) << directory_layout_name(directory) << " rank " << plan.rank;
        at = offset + bytes;
      }
      std::uint64_t files = 0;
      std::size_t extents = 0;
      for (const backends::FilePlan& f : plan.io.files) {
        files += f.file_size;
        extents += f.extents.size();
      }
      EXPECT_EQ(at, files);
      EXPECT_EQ(plan.buffer_bytes, files);
      // The payload is the tensors' bytes; the framing is written besides them, as padding is.
      std::uint64_t tensors = 0;
      for (const PlacedShard& ps : plan.shards) tensors += ps.bytes;
      EXPECT_EQ(plan.payload_bytes, tensors);
      EXPECT_EQ(plan.io.bytes() - plan.payload_bytes, files - tensors);
      // One write per item (no coalescing asked for): the shards and, on DCP's rank 3, the
      // empty chunks' archives.
      const std::size_t empty = directory == DirectoryLayout::dcp && plan.rank == 3 ? 4 : 0;
      EXPECT_EQ(extents, plan.shards.size() + empty);
    }
  }
}

TEST(ItemFraming, OffTheFilesHoldTheTensorsAloneAndPtFilesHaveNoItemFraming) {
  Case c = framed_case("small", 2);
  c.framing = false;
  const std::map<std::string, std::uint64_t> bare = file_sizes(c);
  ASSERT_EQ(bare.size(), 2u);
  // Half the hidden-256 model's bf16 bytes each: 1,726,045 B with framing, 33,117 B of it.
  EXPECT_EQ(bare.at("__0_0.distcp"), 1726045u - 33117u);
  c.framing = true;
  c.directory_layout = DirectoryLayout::megatron;
  c.parallel.zero_sharding = workloads::ZeroSharding::flat;
  const workloads::Shard shard = workloads::Layout(c.model, c.parallel, c.state).shards(0).front();
  EXPECT_EQ(item_framing(shard, c).before, 0u);
  EXPECT_EQ(item_framing(shard, c).after, 0u);
}

TEST(ItemFraming, TheFramingOfAScaledTensorIsThatOfItsSmallerShape) {
  Case c = framed_case("small", 1);
  c.scale = 4;
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const workloads::Shard embed = layout.shards(0).front();
  ASSERT_EQ(embed.global_shape, (std::vector<std::int64_t>{1000, 256}));
  // torch.save of a bf16 [250, 256]: 128,000 B of data at offset 704 of a 129,577 B archive
  // (torch.save wrote).
  const ItemFraming f = item_framing(embed, c);
  EXPECT_EQ(f.before, 704u);
  EXPECT_EQ(f.item_bytes(250 * 256 * 2), 129577u);
}

}  // namespace
}  // namespace ckpt::harness
