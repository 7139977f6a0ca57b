// The load planner of hdf5 checkpoints: each inference rank's TP slice of a tensor as hyperslabs
// of the datasets that store it, as the hdf5 backend stored them (a shared file's global shapes,
// a file of one rank's slice shapes, leading dimensions divided by model.scale), the vocabulary
// rows another TP pads left to the padding runs, and the slices no hyperslab reads refused.

#include "harness/loadplan/dataset_load_plan.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

// Vocabulary 600: padded to 768 rows at TP 2 and to 1024 at TP 4; not padded at TP 1.
constexpr const char* kHyperslabModel = R"(name = "slabs"
hidden_size = 128
intermediate_size = 256
num_hidden_layers = 1
num_attention_heads = 4
num_key_value_heads = 4
vocab_size = 600
tie_word_embeddings = false
)";

const std::filesystem::path kSlabsDir = "/checkpoint/step_0000001";

// The case and manifest of a TP 2 hdf5 checkpoint of the model's weights (both ranks written),
// loaded at TP `load_tp`.
struct SlabCheckpoint {
  Case c;
  Manifest manifest;
};

SlabCheckpoint slab_checkpoint(const std::string& mapping, int scale, int load_tp,
                               const std::string& shapes = "scaled",
                               const char* model_text = kHyperslabModel,
                               const std::string& model_keys = "") {
  const campaign_test::TempDir models;
  const std::filesystem::path model = models.write("slabs.toml", model_text);
  const std::string text = "[model]\nname = \"" + model.string() +
                           "\"\nscale = " + std::to_string(scale) + "\n" + model_keys +
                           "[campaign]\nname = \"t\"\ntarget = \"out\"\n[parallel]\ntp = 2\n"
                           "[state]\nscope = \"weights\"\n[strategy]\nmapping = \"" +
                           mapping + "\"\n[backend]\nname = \"hdf5\"\n[backend.hdf5]\nshapes = \"" +
                           shapes + "\"\n[load]\ntp = " + std::to_string(load_tp) + "\n";
  const Case c = campaign_test::parse(text).cases.at(0);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const std::vector<std::int64_t> ranks{0, 1};
  const std::vector<RankPlan> written = plan_ranks(layout, c, ranks, kSlabsDir);
  std::vector<std::vector<std::uint64_t>> checksums;
  for (const RankPlan& plan : written) checksums.emplace_back(plan.shards.size(), 0);
  return {c, make_manifest(c, 2, ranks, manifest_tensors(written, checksums), 1)};
}

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string out;
  for (const std::uint64_t d : dims) out += (out.empty() ? "" : ",") + std::to_string(d);
  return "[" + out + "]";
}

// The pieces of `tensor`'s dataset in every plan, one line each: rank, file, the dataset's shape,
// the hyperslab, its scaled elements, and where in the shard it lands.
std::string slabs_of(const std::vector<RankPlan>& plans, const std::string& tensor) {
  std::string out;
  for (const RankPlan& p : plans) {
    std::uint64_t shard_at = 0;
    for (const PlacedShard& s : p.shards) {
      if (s.shard.name == tensor) shard_at = s.memory_offset;
    }
    for (const backends::FilePlan& f : p.io.files) {
      for (const backends::DatasetPiece& d : f.datasets) {
        if (d.name != "weight/" + tensor) continue;
        out += "rank " + std::to_string(p.rank) + " " +
               std::filesystem::path(f.path).filename().string() + (f.shared ? " shared " : " ") +
               dims_text(d.global_shape) + " " + dims_text(d.offset) + "+" + dims_text(d.extent) +
               " " + std::to_string(d.flat_end - d.flat_begin) + " at +" +
               std::to_string(d.memory_offset - shard_at) + "\n";
      }
    }
  }
  return out;
}

std::vector<RankPlan> slab_plans(const SlabCheckpoint& w) {
  return load_plans(w.manifest, load_spec(w.c), inference_ranks(w.c.load.inference), kSlabsDir);
}

bool hdf5_listed() {
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (b.name == "hdf5") return true;
  }
  return false;
}

// One shared file holds every tensor at its global shape (leading dimension / 4): a TP 4 slice is
// part of one TP 2 slice, a TP 1 slice the whole tensor, each one hyperslab; the vocabulary rows
// TP 4 pads (768..1023) are stored nowhere and not read.
TEST(DatasetLoadPlan, SharedFileSlicesAreOneHyperslabEachAtAnyTp) {
  if (!hdf5_listed()) GTEST_SKIP() << "this build lists no hdf5 backend";
  const SlabCheckpoint four = slab_checkpoint("shared_file", 4, 4);
  const std::vector<RankPlan> plans = slab_plans(four);
  ASSERT_EQ(plans.size(), 4u);
  const std::string embed = "model.embed_tokens.weight";
  // Rank 3's rows 768..1023 are all padding: no piece.
  EXPECT_EQ(slabs_of(plans, embed),
            "rank 0 checkpoint.bin shared [768,128] [0,0]+[256,128] 8192 at +0\n"
            "rank 1 checkpoint.bin shared [768,128] [256,0]+[256,128] 8192 at +0\n"
            "rank 2 checkpoint.bin shared [768,128] [512,0]+[256,128] 8192 at +0\n");
  EXPECT_EQ(slabs_of(plans, "model.layers.0.self_attn.o_proj.weight"),
            "rank 0 checkpoint.bin shared [128,128] [0,0]+[128,32] 1024 at +0\n"
            "rank 1 checkpoint.bin shared [128,128] [0,32]+[128,32] 1024 at +0\n"
            "rank 2 checkpoint.bin shared [128,128] [0,64]+[128,32] 1024 at +0\n"
            "rank 3 checkpoint.bin shared [128,128] [0,96]+[128,32] 1024 at +0\n");
  for (const RankPlan& p : plans) {
    EXPECT_TRUE(p.reshard.requests.empty());
    EXPECT_TRUE(p.reshard.copies.empty());
    EXPECT_EQ(p.reshard.bytes_read, p.reshard.bytes_needed);
    EXPECT_EQ(p.io.attributes.at("scale"), "4");
  }
  const SlabCheckpoint one = slab_checkpoint("shared_file", 4, 1);
  const std::vector<RankPlan> whole = slab_plans(one);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(slabs_of(whole, embed),
            "rank 0 checkpoint.bin shared [768,128] [0,0]+[600,128] 19200 at +0\n");
  EXPECT_EQ(slabs_of(whole, "model.layers.0.self_attn.o_proj.weight"),
            "rank 0 checkpoint.bin shared [128,128] [0,0]+[128,128] 4096 at +0\n");
}

// A file per rank holds each rank's slices as datasets of their own shapes: a TP 4 slice is a
// hyperslab of one of them, offset from where that slice starts; at TP 1 the embedding's rows
// come from both files, each part a run of the slice, but o_proj's columns would be joined across
// its rows: refused, naming the tensor, the files and the fix.
TEST(DatasetLoadPlan, FilePerRankSlicesReadInsideTheStoredSlicesOrAreRefused) {
  if (!hdf5_listed()) GTEST_SKIP() << "this build lists no hdf5 backend";
  const std::vector<RankPlan> plans = slab_plans(slab_checkpoint("file_per_rank", 4, 4));
  // Rank 1's rows 256..511: 256..383 from rank 0's slice, 384..511 from rank 1's, 32 scaled
  // rows (8192 bytes) further in the shard.
  EXPECT_EQ(slabs_of(plans, "model.embed_tokens.weight"),
            "rank 0 __0_0.distcp shared [384,128] [0,0]+[256,128] 8192 at +0\n"
            "rank 1 __0_0.distcp shared [384,128] [256,0]+[128,128] 4096 at +0\n"
            "rank 1 __1_0.distcp shared [384,128] [0,0]+[128,128] 4096 at +8192\n"
            "rank 2 __1_0.distcp shared [384,128] [128,0]+[256,128] 8192 at +0\n");
  EXPECT_EQ(slabs_of(plans, "model.layers.0.self_attn.o_proj.weight"),
            "rank 0 __0_0.distcp shared [128,64] [0,0]+[128,32] 1024 at +0\n"
            "rank 1 __0_0.distcp shared [128,64] [0,32]+[128,32] 1024 at +0\n"
            "rank 2 __1_0.distcp shared [128,64] [0,0]+[128,32] 1024 at +0\n"
            "rank 3 __1_0.distcp shared [128,64] [0,32]+[128,32] 1024 at +0\n");
  try {
    slab_plans(slab_checkpoint("file_per_rank", 4, 1));
    ADD_FAILURE() << "expected a refusal";
  } catch (const ReshardError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tensor model.layers.0.self_attn.o_proj.weight (weight), slice [0:128, 0:128] of "
              "inference rank 0: it is stored in 2 files (__0_0.distcp, __1_0.distcp) as slices "
              "that cut it across its rows, so the part in each file is no run of the slice's "
              "elements; load at the writer's TP or a multiple of it, or write the checkpoint with "
              "files the processes share (strategy.mapping = \"shared_file\": one dataset of the "
              "whole tensor)");
  }
}

// backend.hdf5.shapes = "global" under model.scale 4: each stored piece holds its first quarter in
// the tensor's full coordinates, so the writer's own TP reads back, piece for piece, and another
// is refused.
TEST(DatasetLoadPlan, GlobalShapesUnderAScaleReadOnlyTheWritersSlices) {
  if (!hdf5_listed()) GTEST_SKIP() << "this build lists no hdf5 backend";
  const std::vector<RankPlan> same = slab_plans(slab_checkpoint("shared_file", 4, 2, "global"));
  EXPECT_EQ(slabs_of(same, "model.embed_tokens.weight"),
            "rank 0 checkpoint.bin shared [768,128] [0,0]+[384,128] 12288 at +0\n"
            "rank 1 checkpoint.bin shared [768,128] [384,0]+[384,128] 12288 at +0\n");
  EXPECT_EQ(same.at(0).io.attributes.at("scale"), "1");
  try {
    slab_plans(slab_checkpoint("shared_file", 4, 4, "global"));
    ADD_FAILURE() << "expected a refusal";
  } catch (const ReshardError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tensor model.embed_tokens.weight (weight), slice [0:256, 0:128] of inference rank "
              "0: its dataset in checkpoint.bin keeps its global shape under model.scale = 4 "
              "(backend.hdf5.shapes = \"global\", or a piece that does not divide by the scale), "
              "where each stored piece holds only its first elements: only the writer's own "
              "slices read back from it; load at the writer's TP, or write with "
              "backend.hdf5.shapes = \"scaled\" and a model.scale that divides the slices");
  }
}

// FP8 weights under model.scale 4: each weight's dataset holds a quarter of its elements (16384 of
// q_proj's 65536), its block scales stay whole, so that a load at TP 1 of the TP 2 checkpoint
// reads both, each one hyperslab.
TEST(DatasetLoadPlan, Fp8BlockScalesStayWholeUnderAScaleAndLoadAtAnotherTp) {
  if (!hdf5_listed()) GTEST_SKIP() << "this build lists no hdf5 backend";
  // Two heads of 128: TP 2 keeps whole 128 x 128 blocks.
  constexpr const char* kFp8Model = R"(name = "fp8-slabs"
hidden_size = 256
intermediate_size = 256
num_attention_heads = 2
num_hidden_layers = 1
vocab_size = 600
)";
  const std::vector<RankPlan> plans = slab_plans(
      slab_checkpoint("shared_file", 4, 1, "scaled", kFp8Model, "weights = \"fp8_block\"\n"));
  ASSERT_EQ(plans.size(), 1u);
  const std::string q = "model.layers.0.self_attn.q_proj.weight";
  EXPECT_EQ(slabs_of(plans, q),
            "rank 0 checkpoint.bin shared [256,256] [0,0]+[256,256] 16384 at +0\n");
  EXPECT_EQ(slabs_of(plans, q + "_scale_inv"),
            "rank 0 checkpoint.bin shared [2,2] [0,0]+[2,2] 4 at +0\n");
}

}  // namespace
}  // namespace ckpt::harness
