// strategy.compression over a process's plans: every shard compressed into frames packed per file,
// decoded back byte for byte (verified against its deterministic contents), the stored plans
// rebuilt from a manifest, and damage refused naming the tensor.
#include "harness/exec/codec_plans.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/exec/iteration.hpp"
#include "harness/memory/host_space.hpp"
#include "harness/models/model_zoo.hpp"

namespace ckpt::harness {
namespace {

Case compressed_case(Compression codec, CompressionUnit unit, int threads) {
  Case c;
  c.campaign = "test";
  c.model = zoo_model("llama3-8b");
  c.parallel = {.tp = 2, .pp = 2, .dp = 2, .zero_stage = 1};
  c.state.scope = workloads::StateScope::full;
  c.scale = 4096;
  c.data = DataPattern::trained;
  c.mapping = Mapping::file_per_tensor;
  c.coalesce_bytes = 64 << 10;  // small tensors share packed files: several frames per file
  c.compression = {
      .codec = codec, .level = 1, .unit = unit, .chunk_bytes = 64 << 10, .threads = threads};
  return c;
}

struct Compressed {
  std::vector<RankPlan> plans, stored;
  std::unique_ptr<MemorySpace> host = make_host_space();
  ProcessBuffer raw, frames;
  std::vector<std::vector<std::uint64_t>> checksums;
  CodecWork work;

  explicit Compressed(const Case& c) {
    const workloads::Layout layout(c.model, c.parallel, c.state);
    plans = plan_ranks(layout, c, {0, 5}, "/ckpt");
    raw = ProcessBuffer(plans, *host);
    checksums = fill_plans(plans, raw, c.data);
    stored = bounded_stored_plans(plans, c);
    frames = ProcessBuffer(stored, *host);
    work = compress_plans(plans, raw, c, stored, frames);
  }

  // The frames decoded into a zeroed buffer of the logical plans: "" or the problem.
  std::string decode(int threads, ProcessBuffer& into) {
    into = ProcessBuffer(plans, *host);
    into.zero();
    CodecWork decoded;
    const std::string problem = decode_plans(stored, frames, into, threads, decoded);
    EXPECT_EQ(decoded.raw_bytes, work.raw_bytes);
    EXPECT_EQ(decoded.stored_bytes, work.stored_bytes);
    return problem;
  }
};

class CodecRoundTrip
    : public ::testing::TestWithParam<std::tuple<Compression, CompressionUnit, int>> {};

TEST_P(CodecRoundTrip, EveryShardRoundTripsThroughItsFramesByteForByte) {
  const auto [codec, unit, threads] = GetParam();
  const Case c = compressed_case(codec, unit, threads);
  Compressed z(c);
  std::uint64_t payload = 0, stored = 0;
  for (const RankPlan& p : z.plans) payload += p.payload_bytes;
  for (const RankPlan& p : z.stored) stored += p.io.bytes();
  EXPECT_EQ(z.work.raw_bytes, payload);
  EXPECT_EQ(z.work.stored_bytes, stored);  // the IoPlans move exactly the frames
  EXPECT_EQ(z.work.threads, threads);
  // Trained values (mostly fp32 optimizer state here): zstd alone saves several percent.
  EXPECT_LT(z.work.stored_bytes, payload * 97 / 100);
  ProcessBuffer restored;
  EXPECT_EQ(z.decode(threads, restored), "");
  EXPECT_EQ(verify_plans(z.plans, restored, c.data), "");
  EXPECT_EQ(shard_checksums(z.plans, restored), z.checksums);
  // Each file holds its frames back to back from offset 0, as the stored buffer mirrors them.
  for (const RankPlan& p : z.stored) {
    for (std::size_t i = 1; i < p.shards.size(); ++i) {
      const PlacedShard& a = p.shards[i - 1];
      const PlacedShard& b = p.shards[i];
      if (a.file == b.file) {
        EXPECT_EQ(b.file_offset, a.file_offset + a.stored_bytes) << b.shard.name;
        EXPECT_EQ(b.stored_offset - b.file_offset, a.stored_offset - a.file_offset);
      } else {
        EXPECT_EQ(b.file_offset, 0u) << b.shard.name;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    CodecsUnitsThreads, CodecRoundTrip,
    ::testing::Values(std::tuple{Compression::zstd, CompressionUnit::shard, 1},
                      std::tuple{Compression::bytegroup, CompressionUnit::shard, 2},
                      std::tuple{Compression::bytegroup, CompressionUnit::chunk, 3}));

TEST(CodecPlans, ByteGroupingStoresLessThanZstdOnTrainedValues) {
  const Compressed zstd(compressed_case(Compression::zstd, CompressionUnit::shard, 1));
  const Compressed grouped(compressed_case(Compression::bytegroup, CompressionUnit::shard, 1));
  EXPECT_EQ(zstd.work.raw_bytes, grouped.work.raw_bytes);
  EXPECT_LT(grouped.work.stored_bytes, zstd.work.stored_bytes);
}

TEST(CodecPlans, TheManifestsRecordRebuildsTheStoredPlans) {
  const Case c = compressed_case(Compression::bytegroup, CompressionUnit::chunk, 1);
  const Compressed z(c);
  Manifest m;
  m.writer.compression = c.compression;
  m.tensors = manifest_tensors(z.stored, z.checksums);
  ASSERT_GT(m.tensors.front().stored_bytes, 0u);
  const std::vector<RankPlan> read = manifest_stored_plans(m, z.plans, c);
  ASSERT_EQ(read.size(), z.stored.size());
  for (std::size_t p = 0; p < read.size(); ++p) {
    ASSERT_EQ(read[p].shards.size(), z.stored[p].shards.size());
    for (std::size_t i = 0; i < read[p].shards.size(); ++i) {
      EXPECT_EQ(read[p].shards[i].file_offset, z.stored[p].shards[i].file_offset);
      EXPECT_EQ(read[p].shards[i].stored_bytes, z.stored[p].shards[i].stored_bytes);
    }
    EXPECT_EQ(read[p].io.bytes(), z.stored[p].io.bytes());
  }
  // An offset that is not where the pieces before it end is refused, naming the tensor.
  Manifest moved = m;
  moved.tensors[1].file_offset += 1;
  try {
    manifest_stored_plans(moved, z.plans, c);
    ADD_FAILURE() << "a moved piece was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor " + m.tensors[1].shard.name), std::string::npos)
        << e.what();
  }
  Manifest raw = m;
  raw.tensors[0].stored_bytes = 0;
  EXPECT_THROW(manifest_stored_plans(raw, z.plans, c), std::runtime_error);
}

TEST(CodecPlans, ADamagedFrameIsRefusedNamingItsFileAndTensor) {
  const Case c = compressed_case(Compression::bytegroup, CompressionUnit::shard, 1);
  Compressed z(c);
  // The largest piece of rank 5: its middle byte lies in a frame's payload.
  const std::vector<PlacedShard>& shards = z.stored[1].shards;
  const PlacedShard& victim = *std::max_element(
      shards.begin(), shards.end(),
      [](const PlacedShard& a, const PlacedShard& b) { return a.stored_bytes < b.stored_bytes; });
  std::byte* at =
      z.frames.view().data + z.frames.offset(1) + victim.stored_offset + victim.stored_bytes / 2;
  *at ^= std::byte{0x40};
  ProcessBuffer restored;
  const std::string problem = z.decode(1, restored);
  const std::string expected_start = victim.file + " at byte " +
                                     std::to_string(victim.file_offset) + ": tensor " +
                                     victim.shard.name + " (";
  EXPECT_EQ(problem.substr(0, expected_start.size()), expected_start) << problem;
  EXPECT_NE(problem.find(", rank 5): damaged compressed piece: the frame at byte 0 of the piece: "
                         "damaged payload"),
            std::string::npos)
      << problem;
}

}  // namespace
}  // namespace ckpt::harness
