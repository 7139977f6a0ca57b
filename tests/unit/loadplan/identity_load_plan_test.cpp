// The load planner with the identity target (a same-layout restore) plans exactly the restore
// that had a planner of its own before: the same files, the same byte ranges cut the same way,
// into the same places of each rank's buffer, with the same shards to verify and the same sizes to
// record. That planner stays here, unchanged, as the oracle.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/training_state.hpp"
#include "tests/unit/campaign_test_support.hpp"

namespace ckpt::harness {
namespace {

using campaign_test::parse;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string out;
  for (const std::int64_t d : shape) out += std::to_string(d) + ",";
  return "[" + out + "]";
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::vector<std::int64_t> signed_shape(shape.begin(), shape.end());
  return shape_text(signed_shape);
}

// Everything of a rank plan that a restore reads, verifies or records, one line each.
std::string plan_text(const RankPlan& p) {
  std::string out = "rank " + std::to_string(p.rank) + " buffer " + std::to_string(p.buffer_bytes) +
                    " payload " + std::to_string(p.payload_bytes) + " headers " +
                    std::to_string(p.headers.size()) + "\n";
  for (const PlacedShard& s : p.shards) {
    const ShardGeometry& g = s.geometry;
    out += "shard " + s.shard.name + " " + std::string(workloads::state_kind_name(s.shard.state)) +
           " rank " + std::to_string(s.rank) + " holder " + std::to_string(s.holder) + " " +
           s.file + " @" + std::to_string(s.file_offset) + " -> " +
           std::to_string(s.memory_offset) + " +" + std::to_string(s.bytes) + " key " +
           std::to_string(s.data_key) + " geometry " + shape_text(g.global_shape) +
           shape_text(g.offset) + shape_text(g.extent) + " " + std::to_string(g.flat_begin) + "-" +
           std::to_string(g.flat_end) + " x" + std::to_string(g.element_bytes) +
           (g.exact ? " exact" : "") + "\n";
  }
  for (const backends::FilePlan& f : p.io.files) {
    out += "file " + f.path + (f.shared ? " shared" : "") + " reserve " +
           std::to_string(f.reserve_offset) + " size " + std::to_string(f.file_size) + "\n";
    for (const backends::Extent& e : f.extents) {
      out += "  extent @" + std::to_string(e.file_offset) + " +" + std::to_string(e.length) +
             " -> " + std::to_string(e.memory_offset) + "\n";
    }
    for (const backends::DatasetPiece& d : f.datasets) {
      out += "  dataset " + d.name + " " + d.dtype + " " + shape_text(d.global_shape) +
             shape_text(d.offset) + shape_text(d.extent) + " " + std::to_string(d.flat_begin) +
             "-" + std::to_string(d.flat_end) + " -> " + std::to_string(d.memory_offset) + "\n";
    }
  }
  return out;
}

// The oracle: the same-layout restore's plans as its own planner made them from a manifest, each
// rank's entries in manifest order with the extents the case's settings give.
std::vector<RankPlan> restore_plans_before(const Manifest& manifest, const Case& c,
                                           const std::vector<std::int64_t>& ranks,
                                           const std::filesystem::path& dir) {
  std::map<std::int64_t, RankPlan> by_rank;
  for (std::int64_t r : ranks) by_rank[r].rank = r;
  for (const ManifestTensor& t : manifest.tensors) {
    const auto it = by_rank.find(t.rank);
    if (it == by_rank.end()) continue;
    it->second.shards.push_back({.shard = t.shard,
                                 .rank = it->first,
                                 .holder = -1,
                                 .file = t.file,
                                 .file_offset = t.file_offset,
                                 .memory_offset = t.memory_offset,
                                 .bytes = t.bytes,
                                 .data_key = t.data_key,
                                 .geometry = shard_geometry(t.shard, manifest.layout.scale)});
  }
  const std::uint64_t align = std::max<std::uint64_t>(1, c.alignment);
  std::vector<RankPlan> plans;
  for (auto& [rank, plan] : by_rank) {
    std::map<std::string, std::vector<backends::Extent>> per_file;
    std::map<std::string, std::vector<backends::DatasetPiece>> pieces;
    std::vector<std::string> order;
    for (const PlacedShard& ps : plan.shards) {
      if (!per_file.contains(ps.file)) order.push_back(ps.file);
      const std::uint64_t length = c.io.direct ? (ps.bytes + align - 1) / align * align : ps.bytes;
      per_file[ps.file].push_back({ps.file_offset, ps.memory_offset, length});
      pieces[ps.file].push_back(dataset_piece(ps));
      plan.payload_bytes += ps.bytes;
      plan.buffer_bytes =
          std::max(plan.buffer_bytes, (ps.memory_offset + ps.bytes + align - 1) / align * align);
    }
    for (const std::string& file : order) {
      backends::FilePlan fp;
      fp.path = (dir / file).string();
      fp.extents = build_extents(std::move(per_file[file]), c.coalesce_bytes, c.chunk_bytes,
                                 c.io.direct ? align : 1);
      fp.shared = mapping_shares_files(c.mapping);
      fp.datasets = std::move(pieces[file]);
      plan.io.files.push_back(std::move(fp));
    }
    plans.push_back(std::move(plan));
  }
  return plans;
}

// A model small enough for hundreds of cases a second, with tensors of 128 bytes to 64 KiB:
// chunks of 4 KiB cut the large ones, coalescing up to 64 KiB merges the small ones.
constexpr const char* kTinyModel = R"(name = "tiny"
hidden_size = 128
intermediate_size = 256
num_hidden_layers = 4
num_attention_heads = 4
num_key_value_heads = 2
vocab_size = 512
)";

// Every case of the sweep, its checkpoint holding the state of `iteration` (nullopt: none): the
// identity plans equal the same-layout restore plans, rank by rank, whichever order the ranks
// come in (read_shift hands them out of order).
void expect_identity_equals_restore(const std::string& sweep, const std::string& model_keys = "",
                                    std::optional<std::int64_t> iteration = std::nullopt) {
  const campaign_test::TempDir models;
  const std::filesystem::path model = models.write("tiny.toml", kTinyModel);
  const std::string text = "[model]\nname = \"" + model.string() + "\"\n" + model_keys +
                           "[campaign]\nname = \"t\"\ntarget = \"out\"\n" + sweep;
  const std::filesystem::path dir = "/checkpoint/step_0000001";
  const std::vector<Case> cases = parse(text).cases;
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.swept.dump());
    const workloads::Layout layout(c.model, c.parallel, c.state);
    const std::vector<std::int64_t> ranks = selected_ranks(c, c.parallel.world_size());
    const std::vector<RankPlan> written = plan_ranks(layout, c, ranks, dir);
    std::vector<std::vector<std::uint64_t>> checksums;
    for (const RankPlan& plan : written) checksums.emplace_back(plan.shards.size(), 0);
    const Manifest manifest = make_manifest(c, c.parallel.world_size(), ranks,
                                            manifest_tensors(written, checksums), 1, iteration);
    std::vector<std::int64_t> shuffled = ranks;
    std::rotate(shuffled.begin(), shuffled.begin() + static_cast<std::ptrdiff_t>(ranks.size() / 2),
                shuffled.end());
    const std::vector<RankPlan> restore =
        plans_at_iteration(restore_plans_before(manifest, c, shuffled, dir), manifest.iteration());
    const std::vector<RankPlan> loaded = reshard_plans(manifest, identity_spec(c), shuffled, dir);

    ASSERT_EQ(loaded.size(), restore.size());
    std::size_t extents = 0;
    for (std::size_t p = 0; p < restore.size(); ++p) {
      EXPECT_EQ(plan_text(loaded[p]), plan_text(restore[p]));
      EXPECT_EQ(loaded[p].reshard.copies.size(), 0u);
      EXPECT_EQ(loaded[p].reshard.bytes_needed, loaded[p].payload_bytes);
      extents += loaded[p].io.extents();
    }
    EXPECT_GT(extents, 0u) << "a case that reads nothing proves nothing";
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

// Megatron and DeepSpeed write TP-replicated tensors on every TP rank, Megatron's distributed
// optimizer gathers a DP group's shards onto its first rank, torch_dist spreads replicas: each
// rank reads back what it wrote, not what the layout gives it.
TEST(IdentityLoadPlan, EqualsTheSameLayoutRestoreForEveryFrameworkLayout) {
  expect_identity_equals_restore(R"(
[parallel]
tp = [1, 2]
dp = [1, 2]
zero = [0, 1]
[state]
scope = "full"
[strategy]
layout = ["megatron", "deepspeed", "megatron_dist"]
megatron_optimizer = ["gathered", "per_dp"]
)");
}

// O_DIRECT reads every shard's region rounded up to the alignment, as the writer wrote it.
TEST(IdentityLoadPlan, EqualsTheSameLayoutRestoreUnderDirectIo) {
  expect_identity_equals_restore(R"(
[parallel]
tp = [1, 2]
dp = 2
[backend]
direct = true
direct_alignment = 512
[strategy]
mapping = ["file_per_rank", "file_per_tensor", "file_per_node", "shared_file"]
alignment = [0, 4096]
chunk_bytes = [0, 8192]
coalesce_bytes = [0, 65536]
)");
}

// Safetensors files (the header is not read back: its checks come before the plan), a
// model.scale that does not shrink every tensor exactly, and the state of a training iteration.
TEST(IdentityLoadPlan, EqualsTheSameLayoutRestoreOfSafetensorsScaledAndTrainedCheckpoints) {
  expect_identity_equals_restore(R"(
[parallel]
tp = [1, 2]
[state]
scope = ["weights", "full"]
[strategy]
format = "safetensors"
max_shard_bytes = [20000, 5000000000]
)");
  expect_identity_equals_restore(R"(
[parallel]
tp = [1, 2]
dp = 2
zero = [0, 1]
[state]
scope = "full"
)",
                                 "scale = [3, 5]\n", 7);
}

}  // namespace
}  // namespace ckpt::harness
