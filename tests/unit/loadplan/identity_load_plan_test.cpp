// The load planner with the writer's own layout as its target (a same-layout restore planned as a
// reshard) reads exactly what the restore of today reads: the same files, the same byte ranges
// cut the same way, into the same places of each rank's buffer.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

using campaign_test::parse;

// One read as the backend sees it: file, file offset, length, buffer offset.
using Read = std::tuple<std::string, std::uint64_t, std::uint64_t, std::uint64_t>;

std::vector<Read> reads_of(const RankPlan& plan) {
  std::vector<Read> reads;
  for (const backends::FilePlan& file : plan.io.files) {
    for (const backends::Extent& e : file.extents)
      reads.emplace_back(file.path, e.file_offset, e.length, e.memory_offset);
  }
  std::sort(reads.begin(), reads.end());
  return reads;
}

std::string read_text(const Read& r) {
  return std::get<0>(r) + " @" + std::to_string(std::get<1>(r)) + " +" +
         std::to_string(std::get<2>(r)) + " -> " + std::to_string(std::get<3>(r));
}

Manifest manifest_of(const Case& c, const std::vector<RankPlan>& written,
                     const std::vector<std::int64_t>& ranks) {
  std::vector<std::vector<std::uint64_t>> checksums;
  for (const RankPlan& plan : written) checksums.emplace_back(plan.shards.size(), 0);
  return make_manifest(c, c.parallel.world_size(), ranks, manifest_tensors(written, checksums), 1);
}

// Every case of the sweep: the identity load plans equal the same-layout restore plans, rank by
// rank.
void expect_identity_equals_restore(const std::string& sweep) {
  // A model small enough for hundreds of cases a second, with tensors of 128 bytes to 64 KiB:
  // chunks of 4 KiB cut the large ones, coalescing up to 64 KiB merges the small ones.
  const campaign_test::TempDir models;
  const std::filesystem::path model = models.write("tiny.toml", R"(name = "tiny"
hidden_size = 128
intermediate_size = 256
num_hidden_layers = 4
num_attention_heads = 4
num_key_value_heads = 2
vocab_size = 512
)");
  const std::string text = "[model]\nname = \"" + model.string() +
                           "\"\n[campaign]\nname = \"t\"\ntarget = \"out\"\n" + sweep;
  const std::filesystem::path dir = "/checkpoint/step_0000001";
  for (Case c : parse(text).cases) {
    SCOPED_TRACE(c.swept.dump());
    const workloads::Layout layout(c.model, c.parallel, c.state);
    const std::vector<std::int64_t> ranks = selected_ranks(c, c.parallel.world_size());
    const std::vector<RankPlan> written = plan_ranks(layout, c, ranks, dir);
    const Manifest manifest = manifest_of(c, written, ranks);
    const std::vector<RankPlan> restore = plans_from_manifest(manifest, c, ranks, dir);

    ReshardSpec identity = reshard_spec(c);
    identity.reader.parallel = c.parallel;
    identity.reader.state = c.state;
    identity.reader.read = ReshardRead::exact;
    identity.merge_adjacent = false;
    identity.coalesce_bytes = c.coalesce_bytes;
    identity.writer_placement = true;
    std::vector<RankPlan> loaded = reshard_plans(manifest, identity, ranks, dir);
    std::sort(loaded.begin(), loaded.end(),
              [](const RankPlan& a, const RankPlan& b) { return a.rank < b.rank; });

    ASSERT_EQ(loaded.size(), restore.size());
    for (std::size_t p = 0; p < restore.size(); ++p) {
      SCOPED_TRACE("rank " + std::to_string(restore[p].rank));
      EXPECT_EQ(loaded[p].rank, restore[p].rank);
      const std::vector<Read> planned = reads_of(loaded[p]);
      const std::vector<Read> restored = reads_of(restore[p]);
      EXPECT_EQ(planned.size(), restored.size());
      const auto [a, b] =
          std::mismatch(planned.begin(), planned.end(), restored.begin(), restored.end());
      if (a != planned.end() || b != restored.end()) {
        ADD_FAILURE() << "first difference at read " << (a - planned.begin()) << ": planned "
                      << (a == planned.end() ? "(none)" : read_text(*a)) << ", restored "
                      << (b == restored.end() ? "(none)" : read_text(*b));
      }
      EXPECT_EQ(loaded[p].reshard.copies.size(), 0u);
      EXPECT_EQ(loaded[p].reshard.bytes_read, loaded[p].reshard.bytes_needed);
    }
  }
}

TEST(IdentityLoadPlan, EqualsTheSameLayoutRestoreForEveryMappingLayoutAndChunkSize) {
  expect_identity_equals_restore(R"(
[parallel]
tp = [1, 2]
pp = [1, 2]
dp = [1, 2]
zero = [0, 1]
[state]
scope = ["weights", "full"]
[strategy]
mapping = ["file_per_rank", "file_per_tensor", "file_per_node", "shared_file"]
chunk_bytes = [0, 4096]
coalesce_bytes = [0, 65536]
)");
}

}  // namespace
}  // namespace ckpt::harness
