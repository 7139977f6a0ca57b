// Plans: where every shard lands (files, offsets, memory), padding, coalescing and chunking,
// file naming per framework, and manifests that rebuild the same plan in a new process.
#include "harness/plan/checkpoint_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/models/model_zoo.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/file_naming.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

Case small_case(Mapping mapping) {
  Case c;
  c.campaign = "test";
  c.model = zoo_model("llama3-8b");
  c.parallel = {.tp = 2, .pp = 2, .dp = 2, .zero_stage = 1};
  c.scale = 4096;
  c.mapping = mapping;
  c.ranks.gpus_per_node = 4;
  return c;
}

std::vector<RankPlan> plan_all(const Case& c) {
  const workloads::Layout layout(c.model, c.parallel, c.state);
  return plan_ranks(layout, c, selected_ranks(c, layout.world_size()), "/ckpt");
}

// Per file: every extent of every rank, checked for overlap; per rank: memory too.
void expect_no_overlap(const std::vector<RankPlan>& plans) {
  std::map<std::string, std::vector<backends::Extent>> by_file;
  for (const RankPlan& p : plans) {
    std::vector<backends::Extent> memory;
    for (const auto& f : p.io.files) {
      for (const auto& e : f.extents) {
        by_file[f.path].push_back(e);
        memory.push_back(e);
        EXPECT_LE(e.memory_offset + e.length, p.buffer_bytes);
      }
    }
    std::sort(memory.begin(), memory.end(),
              [](auto& a, auto& b) { return a.memory_offset < b.memory_offset; });
    for (std::size_t i = 1; i < memory.size(); ++i) {
      EXPECT_LE(memory[i - 1].memory_offset + memory[i - 1].length, memory[i].memory_offset)
          << "rank " << p.rank;
    }
  }
  for (auto& [path, extents] : by_file) {
    std::sort(extents.begin(), extents.end(),
              [](auto& a, auto& b) { return a.file_offset < b.file_offset; });
    for (std::size_t i = 1; i < extents.size(); ++i) {
      EXPECT_LE(extents[i - 1].file_offset + extents[i - 1].length, extents[i].file_offset) << path;
    }
  }
}

TEST(CheckpointPlan, ScaledBytesKeepWholeElements) {
  workloads::Shard s;
  s.dtype = workloads::Dtype::bf16;
  s.flat_begin = 0;
  s.flat_end = 1000;
  EXPECT_EQ(scaled_bytes(s, 1), 2000u);
  EXPECT_EQ(scaled_bytes(s, 3), 333u * 2);
  EXPECT_EQ(scaled_bytes(s, 5000), 2u);  // at least one element
}

TEST(CheckpointPlan, SelectedRanksOfANode) {
  Case c = small_case(Mapping::file_per_rank);
  c.ranks.select = RankSelect::node;
  c.ranks.node = 1;
  EXPECT_EQ(selected_ranks(c, 8), (std::vector<std::int64_t>{4, 5, 6, 7}));
  c.ranks.node = 1;
  c.ranks.gpus_per_node = 6;
  EXPECT_EQ(selected_ranks(c, 8), (std::vector<std::int64_t>{6, 7}));  // a partial last node
  c.ranks.select = RankSelect::list;
  c.ranks.list = {5, 1, 5};
  EXPECT_EQ(selected_ranks(c, 8), (std::vector<std::int64_t>{1, 5}));
}

TEST(CheckpointPlan, EveryMappingCoversEveryShardOnceWithoutOverlap) {
  for (Mapping m : {Mapping::file_per_tensor, Mapping::file_per_rank, Mapping::file_per_node,
                    Mapping::shared_file}) {
    SCOPED_TRACE(std::string(mapping_name(m)));
    const Case c = small_case(m);
    const auto plans = plan_all(c);
    ASSERT_EQ(plans.size(), 8u);
    const workloads::Layout layout(c.model, c.parallel, c.state);
    for (const RankPlan& p : plans) {
      std::uint64_t expected = 0;
      for (const auto& s : layout.shards(p.rank)) expected += scaled_bytes(s, c.scale);
      EXPECT_EQ(p.payload_bytes, expected);
      EXPECT_EQ(p.io.bytes(), expected);  // no alignment: extents are exactly the shards
      EXPECT_EQ(p.shards.size(), layout.shards(p.rank).size());
    }
    expect_no_overlap(plans);
  }
}

TEST(CheckpointPlan, SharedFileOffsetsDoNotDependOnWhichRanksAreBuilt) {
  Case c = small_case(Mapping::shared_file);
  const auto all = plan_all(c);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const auto just_five = plan_ranks(layout, c, {5}, "/ckpt");
  ASSERT_EQ(just_five.size(), 1u);
  EXPECT_EQ(just_five[0].io.files[0].extents.front().file_offset,
            all[5].io.files[0].extents.front().file_offset);
  // fallocate reserves only the writer's own region of the shared file.
  const auto& five = just_five[0].io.files[0];
  EXPECT_EQ(five.reserve_offset, all[5].io.files[0].extents.front().file_offset);
  EXPECT_EQ(five.file_size, five.extents.back().file_offset + five.extents.back().length);
  // Regions are back to back: rank r + 1 starts where rank r ends.
  for (std::size_t r = 1; r < all.size(); ++r) {
    const auto& prev = all[r - 1].io.files[0].extents.back();
    EXPECT_EQ(all[r].io.files[0].extents.front().file_offset, prev.file_offset + prev.length);
  }
}

TEST(CheckpointPlan, FilePerNodeRestartsOffsetsPerNode) {
  const auto plans = plan_all(small_case(Mapping::file_per_node));
  EXPECT_EQ(plans[0].io.files[0].path, "/ckpt/node_0000.bin");
  EXPECT_EQ(plans[4].io.files[0].path, "/ckpt/node_0001.bin");
  EXPECT_EQ(plans[4].io.files[0].extents.front().file_offset, 0u);
  EXPECT_EQ(plans[0].io.files[0].extents.front().file_offset, 0u);
}

TEST(CheckpointPlan, AlignmentPadsAndDirectRoundsLengths) {
  Case c = small_case(Mapping::file_per_rank);
  c.alignment = 4096;
  c.io.direct = true;
  const auto plans = plan_all(c);
  for (const RankPlan& p : plans) {
    for (const PlacedShard& s : p.shards) {
      EXPECT_EQ(s.file_offset % 4096, 0u) << s.shard.name;
      EXPECT_EQ(s.memory_offset % 4096, 0u) << s.shard.name;
    }
    for (const auto& f : p.io.files) {
      for (const auto& e : f.extents) EXPECT_EQ(e.length % 4096, 0u);
    }
    EXPECT_GT(p.io.bytes(), p.payload_bytes);  // the padding is written too
  }
  expect_no_overlap(plans);
}

TEST(CheckpointPlan, CoalescingMergesAndChunkingSplits) {
  std::vector<backends::Extent> shards{
      {0, 0, 100}, {100, 100, 50}, {256, 256, 10}, {4096, 4096, 5000}};
  EXPECT_EQ(build_extents(shards, 0, 0, 1).size(), 4u);
  const auto merged = build_extents(shards, 300, 0, 1);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].length, 266u);  // gap 150..256 included
  const auto chunks = build_extents(shards, 0, 2048, 1);
  ASSERT_EQ(chunks.size(), 6u);
  EXPECT_EQ(chunks[3].length, 2048u);
  EXPECT_EQ(chunks[5].file_offset, 4096u + 4096u);
  EXPECT_EQ(chunks[5].length, 5000u - 4096u);
  const auto direct = build_extents({{0, 0, 8192}}, 0, 5000, 4096);  // chunk rounded to 4096
  ASSERT_EQ(direct.size(), 2u);
  EXPECT_EQ(direct[0].length, 4096u);
}

TEST(CheckpointPlan, FilePerTensorCoalescingPacksSmallTensors) {
  Case c = small_case(Mapping::file_per_tensor);
  c.coalesce_bytes = 64 * 1024;
  const auto plans = plan_all(c);
  expect_no_overlap(plans);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  for (const RankPlan& p : plans) {
    std::map<std::string, std::uint64_t> bytes_per_file;
    for (const PlacedShard& s : p.shards) {
      bytes_per_file[s.file] += s.bytes;
      const bool packed = s.file.find("packed_") != std::string::npos;
      EXPECT_EQ(packed, s.bytes < c.coalesce_bytes) << s.shard.name;
    }
    for (const auto& [file, bytes] : bytes_per_file) {
      if (file.find("packed_") != std::string::npos) {
        EXPECT_LE(bytes, c.coalesce_bytes) << file;
      }
    }
    EXPECT_LT(p.io.files.size(), layout.shards(p.rank).size()) << "rank " << p.rank;
    EXPECT_EQ(p.io.files.size(), bytes_per_file.size());
  }
}

TEST(CheckpointPlan, FrameworkFileNames) {
  Case c = small_case(Mapping::file_per_rank);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const auto shard = layout.shards(7).front();  // tp 1, dp 1, pp 1
  EXPECT_EQ(shard_file(c, layout, 7, shard), "__7_0.distcp");
  c.directory_layout = DirectoryLayout::megatron;
  EXPECT_EQ(shard_file(c, layout, 7, shard), "mp_rank_01_001/distrib_optim.pt");
  c.megatron_optimizer = MegatronOptimizer::per_dp;
  EXPECT_EQ(shard_file(c, layout, 7, shard), "mp_rank_01_001_001/optim.pt");
  EXPECT_EQ(shard_file(c, layout, 5, layout.shards(5).front()),
            "mp_rank_01_001/model_optim_rng.pt");
  c.directory_layout = DirectoryLayout::deepspeed;
  EXPECT_EQ(shard_file(c, layout, 7, shard), "bf16_zero_pp_rank_1_mp_rank_03_optim_states.pt");
  EXPECT_EQ(shard_file(c, layout, 5, layout.shards(5).front()),
            "layer_17-model_01-model_states.pt");
  c.parallel.pp = 1;
  const workloads::Layout flat(c.model, c.parallel, c.state);
  EXPECT_EQ(shard_file(c, flat, 1, flat.shards(1).front()), "mp_rank_01_model_states.pt");
  c.mapping = Mapping::file_per_tensor;
  EXPECT_EQ(shard_file(c, layout, 7, shard), "r00007/" + shard.name + ".bin");
  EXPECT_EQ(checkpoint_dir_name(DirectoryLayout::megatron, 12), "iter_0000012");
  EXPECT_EQ(checkpoint_dir_name(DirectoryLayout::deepspeed, 12), "global_step12");
}

TEST(CheckpointPlan, ManifestRebuildsTheSamePlan) {
  Case c = small_case(Mapping::shared_file);
  c.coalesce_bytes = 1 << 20;
  const auto plans = plan_all(c);
  std::vector<std::vector<std::uint64_t>> checksums;
  for (const auto& p : plans) checksums.emplace_back(p.shards.size(), 0);
  const auto manifest =
      make_manifest(c, 8, selected_ranks(c, 8), manifest_tensors(plans, checksums), 1);
  const auto rebuilt = reshard_plans(manifest, identity_spec(c), {2, 6}, "/ckpt");
  ASSERT_EQ(rebuilt.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const RankPlan& original = plans[i == 0 ? 2 : 6];
    ASSERT_EQ(rebuilt[i].io.files.size(), original.io.files.size());
    EXPECT_EQ(rebuilt[i].io.files[0].path, original.io.files[0].path);
    ASSERT_EQ(rebuilt[i].io.files[0].extents.size(), original.io.files[0].extents.size());
    EXPECT_EQ(rebuilt[i].io.files[0].extents[0].file_offset,
              original.io.files[0].extents[0].file_offset);
    EXPECT_EQ(rebuilt[i].payload_bytes, original.payload_bytes);
    EXPECT_EQ(rebuilt[i].shards.back().data_key, original.shards.back().data_key);
  }
}

// The tables of an expanded configuration that the manifest's reader types (the read paths plan
// from them).
nlohmann::json recorded_config() {
  return {{"backend", {{"name", "posix"}}},
          {"model", {{"name", "llama3-8b"}, {"sizing", "exact"}, {"scale", 1}}},
          {"parallel",
           {{"tp", 2},
            {"pp", 1},
            {"dp", 4},
            {"ep", 1},
            {"zero", 0},
            {"vocab_divisor", 128},
            {"pp_first_stage_layers", 0},
            {"pp_last_stage_layers", 0}}},
          {"state",
           {{"scope", "full"},
            {"naming", nullptr},
            {"weight_dtype", "bf16"},
            {"master_dtype", "fp32"},
            {"optimizer_dtype", "fp32"}}},
          {"strategy", {{"format", "raw"}, {"alignment", 0}, {"chunk_bytes", 0}}},
          {"data", {{"pattern", "random"}, {"seed", 1}}}};
}

// read_manifest's error for `m` written into `dir`, or "" when it accepts it.
std::string refusal(const test_support::TempDir& dir, const nlohmann::json& m) {
  dir.write(kManifestName, m.dump());
  try {
    read_manifest(dir.path());
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

// Manifests name their checksum algorithm; one without it (an older ckptbench's, whose
// checkpoint_hash this version cannot recompute) is refused by name, not as another configuration;
// so is one of the previous version, whose checkpoint_hash does not cover the training iteration.
TEST(CheckpointPlan, ManifestNamesItsChecksumAlgorithmAndOlderOnesAreRefused) {
  Case c = small_case(Mapping::file_per_rank);
  c.config = recorded_config();
  const auto plans = plan_all(c);
  std::vector<std::vector<std::uint64_t>> checksums;
  for (const auto& p : plans) checksums.emplace_back(p.shards.size(), 0x2D06800538D394C2ULL);
  nlohmann::json manifest = manifest_json(
      make_manifest(c, 8, selected_ranks(c, 8), manifest_tensors(plans, checksums), 1));
  EXPECT_EQ(manifest.at("version"), 5);
  EXPECT_EQ(manifest.at("checksum_algorithm"), "xxh3_64");
  EXPECT_EQ(manifest.at("tensors").at(0).at("checksum"), "2d06800538d394c2");
  EXPECT_EQ(manifest.at("checkpoint_hash").get<std::string>().size(), 16u);
  EXPECT_FALSE(manifest.contains("training_iteration"));

  const test_support::TempDir dir;
  EXPECT_EQ(refusal(dir, manifest), "");
  // What the writer wrote, the reader gives back.
  const Manifest read = read_manifest(dir.path());
  EXPECT_EQ(manifest_json(read), manifest);
  EXPECT_EQ(read.writer.parallel.dp, 4);
  EXPECT_EQ(read.layout.world_size, 8);

  // Version 4 lacks only optional tensor fields: still read. A newer one is refused as newer.
  nlohmann::json previous = manifest;
  previous["version"] = 4;
  EXPECT_EQ(refusal(dir, previous), "");
  previous["version"] = 6;
  const std::string six = refusal(dir, previous);
  EXPECT_NE(six.find("manifest version 6 is not one this ckptbench reads (it reads versions 4 to "
                     "5): written by a newer ckptbench"),
            std::string::npos)
      << six;
  previous["version"] = 3;
  const std::string three = refusal(dir, previous);
  EXPECT_EQ(three.find((dir.path() / kManifestName).string() +
                       ": manifest version 3 was written by an older "
                       "ckptbench"),
            0u)
      << three;
  EXPECT_NE(three.find("write the checkpoint again"), std::string::npos) << three;

  manifest.erase("checksum_algorithm");
  manifest["version"] = 1;
  const std::string old = refusal(dir, manifest);
  EXPECT_NE(old.find((dir.path() / kManifestName).string()), std::string::npos) << old;
  EXPECT_NE(old.find("version 1 has no `checksum_algorithm`"), std::string::npos) << old;
  EXPECT_NE(old.find("older ckptbench"), std::string::npos) << old;
  EXPECT_NE(old.find("write the checkpoint again"), std::string::npos) << old;

  manifest["checksum_algorithm"] = "fnv1a";
  manifest["version"] = 4;
  const std::string other = refusal(dir, manifest);
  EXPECT_NE(other.find("checksum_algorithm \"fnv1a\" is not supported"), std::string::npos)
      << other;
}

// The checkpoint_hash covers the training iteration: the same tensors at another iteration (or
// none) hash differently, and a manifest whose iteration was changed shows it by itself.
TEST(CheckpointPlan, CheckpointHashCoversTheTrainingIteration) {
  Case c = small_case(Mapping::file_per_rank);
  c.config = recorded_config();
  const auto plans = plan_all(c);
  std::vector<std::vector<std::uint64_t>> checksums;
  for (const auto& p : plans) checksums.emplace_back(p.shards.size(), 7);
  const auto tensors = manifest_tensors(plans, checksums);
  const Manifest at_five = make_manifest(c, 8, selected_ranks(c, 8), tensors, 1, 5);
  EXPECT_NE(at_five.checkpoint_hash,
            make_manifest(c, 8, selected_ranks(c, 8), tensors, 1, 6).checkpoint_hash);
  EXPECT_NE(at_five.checkpoint_hash,
            make_manifest(c, 8, selected_ranks(c, 8), tensors, 1).checkpoint_hash);
  EXPECT_EQ(manifest_hash_problem(at_five, "m.json"), std::nullopt);
  Manifest changed = at_five;
  changed.training_iteration = 4;
  const std::optional<std::string> problem = manifest_hash_problem(changed, "m.json");
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(
      problem->find("m.json: checkpoint_hash: \"" + at_five.checkpoint_hash + "\" does not match"),
      0u)
      << *problem;
}

TEST(DataPattern, DeterministicAndEveryFlippedByteIsFound) {
  for (DataPattern pattern : {DataPattern::random, DataPattern::bf16}) {
    std::vector<std::byte> data(1001);
    fill_pattern(data.data(), data.size(), pattern, 42);
    EXPECT_FALSE(first_mismatch(data.data(), data.size(), pattern, 42));
    EXPECT_TRUE(first_mismatch(data.data(), data.size(), pattern, 43))
        << "another key gives other bytes";
    for (std::size_t at : {std::size_t{0}, std::size_t{7}, std::size_t{500}, std::size_t{1000}}) {
      data[at] ^= std::byte{0x10};
      EXPECT_EQ(first_mismatch(data.data(), data.size(), pattern, 42), at);
      data[at] ^= std::byte{0x10};
    }
  }
  std::vector<std::byte> zeros(64);
  fill_pattern(zeros.data(), zeros.size(), DataPattern::zeros, 7);
  EXPECT_EQ(std::count(zeros.begin(), zeros.end(), std::byte{0}), 64);
}

TEST(DataPattern, Bf16ValuesLookLikeWeights) {
  std::vector<std::uint16_t> values(4096);
  fill_pattern(reinterpret_cast<std::byte*>(values.data()), values.size() * 2, DataPattern::bf16,
               9);
  int negative = 0;
  for (std::uint16_t v : values) {
    const int exponent = (v >> 7) & 0xff;
    EXPECT_GE(exponent, 113);
    EXPECT_LE(exponent, 121);  // |x| < 2^-5
    negative += v >> 15;
  }
  EXPECT_NEAR(negative, 2048, 200);
}

}  // namespace
}  // namespace ckpt::harness

namespace ckpt::harness {
namespace {

// Every shard appears once as a dataset piece of its file, holding exactly its bytes at its
// memory offset, with the slice and flat range the layout gives (shortened by the scale).
TEST(CheckpointPlan, DatasetPiecesMirrorTheShards) {
  Case c = small_case(Mapping::shared_file);
  c.scale = 1;
  c.model.num_hidden_layers = 2;
  const std::vector<RankPlan> plans = plan_all(c);
  std::uint64_t pieces = 0, shards = 0;
  for (const RankPlan& p : plans) {
    EXPECT_EQ(p.io.attributes.at("tp"), "2");
    EXPECT_EQ(p.io.attributes.at("zero"), "1");
    EXPECT_EQ(p.io.attributes.at("model"), "");
    shards += p.shards.size();
    for (const auto& f : p.io.files) {
      EXPECT_TRUE(f.shared);
      pieces += f.datasets.size();
      std::uint64_t bytes = 0;
      for (const auto& d : f.datasets) bytes += d.bytes();
      std::uint64_t extent_bytes = 0;
      for (const auto& e : f.extents) extent_bytes += e.length;
      EXPECT_EQ(bytes, extent_bytes) << f.path;
    }
    for (const PlacedShard& ps : p.shards) {
      const backends::DatasetPiece piece = dataset_piece(ps);
      EXPECT_EQ(piece.bytes(), ps.bytes);
      EXPECT_EQ(piece.memory_offset, ps.memory_offset);
      EXPECT_EQ(piece.flat_begin, static_cast<std::uint64_t>(ps.shard.flat_begin));
      EXPECT_EQ(piece.flat_end,
                static_cast<std::uint64_t>(ps.shard.flat_end));  // scale 1: whole range
      EXPECT_EQ(piece.global_shape.size(), ps.shard.global_shape.size());
      EXPECT_EQ(piece.name,
                std::string(workloads::state_kind_name(ps.shard.state)) + "/" + ps.shard.name);
    }
  }
  EXPECT_EQ(pieces, shards);
  // A scale shortens the range to the scaled bytes, whole elements, from the same start.
  c.scale = 7;
  for (const RankPlan& p : plan_all(c)) {
    for (const PlacedShard& ps : p.shards) {
      const backends::DatasetPiece piece = dataset_piece(ps);
      EXPECT_EQ(piece.flat_end - piece.flat_begin,
                static_cast<std::uint64_t>(std::max<std::int64_t>(1, ps.shard.elements() / 7)));
    }
  }
}

// One process's ranks as one plan: shared files merged, memory offsets moved to each rank's
// part of the process buffer.
TEST(CheckpointPlan, ProcessPlanMergesFilesAndShiftsMemory) {
  Case c = small_case(Mapping::file_per_node);
  const workloads::Layout layout(c.model, c.parallel, c.state);
  const std::vector<RankPlan> plans = plan_ranks(layout, c, {0, 1, 2}, "/ckpt");
  const auto host = make_host_space();
  const ProcessBuffer buffer(plans, *host);
  EXPECT_EQ(buffer.offset(0), 0u);
  EXPECT_EQ(buffer.offset(1) % 4096, 0u);
  EXPECT_GE(buffer.offset(1), plans[0].buffer_bytes);
  const backends::IoPlan merged = process_plan(plans, buffer);
  ASSERT_EQ(merged.files.size(), 1u);  // ranks 0-2 share node 0's file
  std::uint64_t extents = 0, pieces = 0;
  for (const RankPlan& p : plans) {
    extents += p.io.extents();
    for (const auto& f : p.io.files) pieces += f.datasets.size();
  }
  EXPECT_EQ(merged.files[0].extents.size(), extents);
  EXPECT_EQ(merged.files[0].datasets.size(), pieces);
  const auto& first_of_rank1 = plans[1].io.files[0].extents[0];
  const auto& merged_first_of_rank1 = merged.files[0].extents[plans[0].io.files[0].extents.size()];
  EXPECT_EQ(merged_first_of_rank1.file_offset, first_of_rank1.file_offset);
  EXPECT_EQ(merged_first_of_rank1.memory_offset, first_of_rank1.memory_offset + buffer.offset(1));
  EXPECT_EQ(merged.bytes(), plans[0].io.bytes() + plans[1].io.bytes() + plans[2].io.bytes());
  EXPECT_EQ(merged.attributes.at("pp"), "2");
}

// A resharding restore's process reads each stored file front to back: two new ranks that each
// need every other 4 KiB block of files A and B become one plan whose files hold both ranks'
// extents in file order, each at its rank's place in the process buffer.
TEST(CheckpointPlan, ProcessPlanInFileOrderReadsEachFileFrontToBack) {
  const auto rank_plan = [](std::uint64_t first) {
    RankPlan p;
    p.buffer_bytes = 4 * 4096;
    std::uint64_t memory = 0;
    for (const char* path : {"/ckpt/A", "/ckpt/B"}) {
      backends::FilePlan& f = p.io.files.emplace_back();
      f.path = path;
      for (const std::uint64_t at : {first, first + 8192}) {
        f.extents.push_back({.file_offset = at, .memory_offset = memory, .length = 4096});
        memory += 4096;
      }
    }
    return p;
  };
  const std::vector<RankPlan> plans = {rank_plan(0), rank_plan(4096)};
  const auto host = make_host_space();
  const ProcessBuffer buffer(plans, *host);
  const std::uint64_t second = buffer.offset(1);
  ASSERT_EQ(second, 4u * 4096);
  const backends::IoPlan by_rank = process_plan(plans, buffer);
  ASSERT_EQ(by_rank.files.size(), 2u);
  EXPECT_EQ(by_rank.files[0].extents[1].file_offset, 8192u);  // rank 0's, then rank 1's
  const backends::IoPlan by_file = process_plan_in_file_order(plans, buffer);
  ASSERT_EQ(by_file.files.size(), 2u);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected_a = {
      {0, 0}, {4096, second}, {8192, 4096}, {12288, second + 4096}};
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected_b = {
      {0, 8192}, {4096, second + 8192}, {8192, 12288}, {12288, second + 12288}};
  for (const auto& [file, expected] : {std::pair{0, expected_a}, std::pair{1, expected_b}}) {
    const backends::FilePlan& f = by_file.files[static_cast<std::size_t>(file)];
    EXPECT_EQ(f.path, file == 0 ? "/ckpt/A" : "/ckpt/B");
    ASSERT_EQ(f.extents.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(f.extents[i].file_offset, expected[i].first) << f.path << " extent " << i;
      EXPECT_EQ(f.extents[i].memory_offset, expected[i].second) << f.path << " extent " << i;
    }
  }
  EXPECT_EQ(by_file.bytes(), 8u * 4096);  // 2 ranks x 2 files x 2 blocks
}

}  // namespace
}  // namespace ckpt::harness
