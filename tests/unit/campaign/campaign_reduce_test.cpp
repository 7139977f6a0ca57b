// strategy.compression*: read into the Case, kept out of the config of cases that compress nothing
// (their config_hash stays what it was), and refused with the reason where the backend, layout,
// memory or phase cannot carry frames of data-dependent size.
#include <gtest/gtest.h>

#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness::campaign_test {
namespace {

TEST(CampaignReduce, CompressionKeysReachTheCaseAndItsConfig) {
  const Case c = parse(kBase + R"([strategy]
compression = "bytegroup"
compression_level = 5
compression_unit = "chunk"
compression_chunk_bytes = "1 MiB"
compression_threads = 2
)")
                     .cases.at(0);
  EXPECT_EQ(c.compression.codec, Compression::bytegroup);
  EXPECT_EQ(c.compression.level, 5);
  EXPECT_EQ(c.compression.unit, CompressionUnit::chunk);
  EXPECT_EQ(c.compression.chunk_bytes, 1u << 20);
  EXPECT_EQ(c.compression.threads, 2);
  EXPECT_EQ(c.config.at("strategy").at("compression"), "bytegroup");
  EXPECT_EQ(c.config.at("strategy").at("compression_chunk_bytes"), 1 << 20);
}

TEST(CampaignReduce, ACaseThatCompressesNothingKeepsItsConfigAndHash) {
  const Case plain = parse(kBase).cases.at(0);
  const Case none =
      parse(kBase + "[strategy]\ncompression = \"none\"\ncompression_level = 9\n").cases.at(0);
  EXPECT_FALSE(plain.compression.enabled());
  EXPECT_FALSE(plain.config.at("strategy").contains("compression"));
  EXPECT_FALSE(plain.config.at("strategy").contains("compression_level"));
  EXPECT_EQ(config_hash(none), config_hash(plain));
}

TEST(CampaignReduce, ASweepOverCodecsMakesOneCaseEach) {
  const Campaign campaign =
      parse(kBase + "[strategy]\ncompression = [\"none\", \"zstd\", \"bytegroup\"]\n");
  ASSERT_EQ(campaign.cases.size(), 3u);
  EXPECT_EQ(campaign.cases[1].compression.codec, Compression::zstd);
  EXPECT_EQ(campaign.cases[1].swept.at("strategy.compression"), "zstd");
}

TEST(CampaignReduce, WhatCannotCarryFramesIsRefusedWithTheReasonAndTheFix) {
  const std::string zstd = kBase + "[strategy]\ncompression = \"zstd\"\n";
  EXPECT_EQ(message_of(zstd, {"backend.direct=true"}),
            "--set: `backend.direct`: strategy.compression = \"zstd\" writes frames of "
            "data-dependent sizes back to back, which O_DIRECT's aligned offsets and lengths "
            "cannot hold: set backend.direct = false, or set strategy.compression = \"none\"");
  EXPECT_EQ(error_of(zstd, {"backend.name=hdf5"}).key(), "backend.name");
  EXPECT_EQ(error_of(zstd, {"strategy.format=safetensors"}).key(), "strategy.format");
  EXPECT_EQ(error_of(zstd, {"strategy.mapping=shared_file"}).key(), "strategy.mapping");
  EXPECT_EQ(error_of(zstd, {"strategy.layout=deepspeed"}).key(), "strategy.layout");
  EXPECT_EQ(error_of(zstd, {"strategy.alignment=4096"}).key(), "strategy.alignment");
  EXPECT_EQ(parse(zstd, {"campaign.phase=load"}).cases.size(), 1u);
  EXPECT_EQ(parse(zstd, {"training.iterations=2", "engine.name=async"}).cases.size(), 1u);
  EXPECT_EQ(
      error_of(zstd, {"training.iterations=2", "engine.name=tiered", "tiers.local_dir=/t"}).key(),
      "engine.name");
  EXPECT_EQ(error_of(zstd, {"restore.tp=2"}).key(), "restore.tp");
  EXPECT_EQ(error_of(zstd, {"cache.policy=read_shift"}).key(), "cache.policy");
  EXPECT_EQ(parse(zstd, {"cache.policy=read_shift", "campaign.phase=restore"}).cases.size(), 1u);
  EXPECT_EQ(error_of(zstd, {"strategy.compression_chunk_bytes=5000"}).key(),
            "strategy.compression_chunk_bytes");
}

TEST(CampaignReduce, SelectiveCheckpointsReachTheCaseAndAreRefusedWhereTheyCannotPoint) {
  const std::string every3 = kBase + "[strategy]\nselective_every = 3\n";
  const Case c = parse(every3).cases.at(0);
  EXPECT_EQ(c.selective.every, 3);
  EXPECT_EQ(c.config.at("strategy").at("selective_every"), 3);
  const Case plain = parse(kBase).cases.at(0);
  EXPECT_FALSE(plain.config.at("strategy").contains("selective_every"));
  EXPECT_EQ(config_hash(parse(kBase + "[strategy]\nselective_every = 1\n").cases.at(0)),
            config_hash(plain));
  EXPECT_EQ(parse(every3, {"strategy.compression=zstd"}).cases.at(0).compression.codec,
            Compression::zstd);  // each checkpoint's frames of the pieces it holds
  EXPECT_EQ(error_of(every3, {"backend.direct=true"}).key(), "backend.direct");
  EXPECT_EQ(error_of(every3, {"backend.name=hdf5"}).key(), "backend.name");
  EXPECT_EQ(error_of(every3, {"strategy.format=safetensors"}).key(), "strategy.format");
  EXPECT_EQ(error_of(every3, {"strategy.mapping=file_per_node"}).key(), "strategy.mapping");
  EXPECT_EQ(error_of(every3, {"strategy.layout=deepspeed"}).key(), "strategy.layout");
  EXPECT_EQ(error_of(every3, {"strategy.alignment=4096"}).key(), "strategy.alignment");
  EXPECT_EQ(error_of(every3, {"memory.reuse_bytes=4096"}).key(), "memory.reuse_bytes");
  // The [training] engines apply the rotation to their flush, but for the tiered engine's parts
  // and the codec's whole snapshot.
  EXPECT_EQ(parse(every3, {"training.iterations=2", "engine.name=async"}).cases.size(), 1u);
  EXPECT_EQ(parse(every3, {"training.iterations=2", "engine.name=lazy"}).cases.size(), 1u);
  EXPECT_EQ(
      error_of(every3, {"training.iterations=2", "engine.name=tiered", "tiers.local_dir=/t"}).key(),
      "engine.name");
  EXPECT_EQ(error_of(every3, {"training.iterations=2", "strategy.compression=zstd"}).key(),
            "strategy.compression");
  EXPECT_EQ(parse(every3, {"strategy.mapping=file_per_tensor"}).cases.size(), 1u);
  EXPECT_EQ(error_of(every3, {"strategy.selective_every=0"}).key(), "strategy.selective_every");
}

TEST(CampaignReduce, PartialExpertsNeedAModelWithMoreRoutedExpertsStoredOneByOne) {
  const std::string two = kBase + "[strategy]\npartial_experts = 2\n";
  EXPECT_EQ(error_of(two, {}).key(), "model.name");  // the base model has no experts
  const Case c = parse(two, {"model.name=mixtral-8x7b"}).cases.at(0);
  EXPECT_EQ(c.selective.experts, 2);
  EXPECT_EQ(c.selective.total_experts, 8);
  EXPECT_EQ(c.config.at("strategy").at("partial_experts"), 2);
  EXPECT_FALSE(parse(kBase).cases.at(0).config.at("strategy").contains("partial_experts"));
  EXPECT_EQ(
      message_of(two, {"model.name=mixtral-8x7b", "strategy.partial_experts=8"}),
      "--set: `strategy.partial_experts`: strategy.partial_experts = 8 holds every one of the 8 "
      "routed experts in every checkpoint: set it below 8, or set strategy.partial_experts = 0");
  EXPECT_EQ(error_of(two, {"model.name=mixtral-8x7b", "strategy.selective_every=2"}).key(),
            "strategy.selective_every");
}

TEST(CampaignReduce, DeltaCheckpointsReachTheCaseAndAreRefusedWhereTheUpdateOrLayoutCannot) {
  const std::string every4 = kBase +
                             "[strategy]\ndelta_every = 4\ndelta_block_bytes = \"8 KiB\"\n"
                             "delta_changed_fraction = 0.25\n";
  const Case c = parse(every4).cases.at(0);
  EXPECT_EQ(c.selective.delta_every, 4);
  EXPECT_EQ(c.selective.block_bytes, 8192u);
  EXPECT_EQ(c.selective.changed_per_million, 250'000u);
  EXPECT_EQ(c.config.at("strategy").at("delta_every"), 4);
  // A copy: the parsed campaign is a temporary.
  const nlohmann::json plain = parse(kBase).cases.at(0).config.at("strategy");
  for (const char* key : {"delta_every", "delta_block_bytes", "delta_changed_fraction"})
    EXPECT_FALSE(plain.contains(key)) << key;
  EXPECT_EQ(message_of(every4, {"strategy.selective_every=2"}),
            "--set: `strategy.selective_every`: strategy.delta_every = 4 stores changed blocks of "
            "every piece, not a rotating subset of them: set strategy.selective_every = 1 and "
            "strategy.partial_experts = 0, or set strategy.delta_every = 1");
  EXPECT_EQ(error_of(every4, {"strategy.delta_block_bytes=6000"}).key(),
            "strategy.delta_block_bytes");
  // Compressed: the base's frames, then each changed run's.
  EXPECT_EQ(parse(every4, {"strategy.compression=zstd"}).cases.size(), 1u);
  EXPECT_EQ(parse(every4, {"restore.tp=2"}).cases.size(), 1u);  // base and runs mapped
  EXPECT_EQ(error_of(every4, {"restore.replicas=read"}).key(), "restore.replicas");
  EXPECT_EQ(
      error_of(every4, {"strategy.layout=megatron", "parallel.dp=2", "parallel.zero=1"}).key(),
      "strategy.megatron_optimizer");
  EXPECT_EQ(parse(every4, {"strategy.layout=megatron", "parallel.dp=2", "parallel.zero=1",
                           "strategy.megatron_optimizer=per_dp"})
                .cases.size(),
            1u);
  EXPECT_EQ(error_of(every4, {"strategy.delta_changed_fraction=1.5"}).key(),
            "strategy.delta_changed_fraction");
}

}  // namespace
}  // namespace ckpt::harness::campaign_test
