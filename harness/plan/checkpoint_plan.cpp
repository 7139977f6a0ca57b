#include "harness/plan/checkpoint_plan.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <string_view>

#include "harness/formats/safetensors_plan.hpp"
#include "harness/memory/checksum.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/file_naming.hpp"

namespace ckpt::harness {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

std::uint64_t alignment_of(const Case& c) { return std::max<std::uint64_t>(1, c.alignment); }

}  // namespace

std::uint64_t shard_data_key(const workloads::Shard& s, std::uint64_t seed) {
  std::string identity = s.name;
  identity.push_back('\0');
  auto add = [&identity](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) identity.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  add(seed);
  add(static_cast<std::uint64_t>(s.state));
  for (std::int64_t o : s.offset) add(static_cast<std::uint64_t>(o));
  add(static_cast<std::uint64_t>(s.flat_begin));
  return checksum64(identity);
}

namespace {

// Bytes one rank's region of a shared file occupies: shards placed back to back at aligned
// offsets, the end rounded up for direct I/O. Must match plan_file() below.
std::uint64_t region_bytes(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  const std::uint64_t align = alignment_of(c);
  std::uint64_t pos = 0;
  for (const workloads::Shard& s : layout.shards(rank)) pos = align_up(pos, align) + scaled_bytes(s, c.scale);
  return align_up(pos, align);
}

// Where each rank's region starts in the shared files of the selected ranks, and file sizes.
struct SharedFiles {
  std::map<std::int64_t, std::uint64_t> region_offset;  // rank -> offset in its file
  std::map<std::int64_t, std::uint64_t> file_size;      // group -> bytes
};

std::pair<std::int64_t, std::int64_t> group_ranks(const Case& c, std::int64_t world, std::int64_t rank) {
  if (c.mapping == Mapping::shared_file) return {0, world};
  const std::int64_t node = rank / c.ranks.gpus_per_node;
  return {node * c.ranks.gpus_per_node, std::min(world, (node + 1) * c.ranks.gpus_per_node)};
}

SharedFiles place_shared_files(const workloads::Layout& layout, const Case& c,
                               const std::vector<std::int64_t>& ranks) {
  SharedFiles shared;
  for (std::int64_t rank : ranks) {
    const auto [first, last] = group_ranks(c, layout.world_size(), rank);
    if (shared.file_size.contains(first)) continue;
    std::uint64_t offset = 0;
    for (std::int64_t r = first; r < last; ++r) {
      shared.region_offset[r] = offset;
      offset += region_bytes(layout, c, r);
    }
    shared.file_size[first] = offset;
  }
  return shared;
}

struct FileGroup {
  std::string file;
  std::vector<workloads::Shard> shards;
};

// file_per_tensor with coalescing packs tensors smaller than coalesce_bytes into shared
// files of up to coalesce_bytes each (TorchSnapshot / ByteCheckpoint-style small-tensor
// buckets); larger tensors keep a file of their own.
class TensorPacker {
 public:
  explicit TensorPacker(const Case& c) : limit_(c.mapping == Mapping::file_per_tensor ? c.coalesce_bytes : 0) {}

  std::optional<std::string> pack(std::int64_t rank, std::uint64_t bytes) {
    if (limit_ == 0 || bytes >= limit_) return std::nullopt;
    if (filled_ > 0 && filled_ + bytes > limit_) {
      ++index_;
      filled_ = 0;
    }
    filled_ += bytes;
    return fmt::format("r{:05d}/packed_{:04d}.bin", rank, index_);
  }

 private:
  std::uint64_t limit_;
  std::uint64_t filled_ = 0;
  std::int64_t index_ = 0;
};

std::vector<FileGroup> group_by_file(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  std::vector<FileGroup> groups;
  std::map<std::string, std::size_t> index;
  TensorPacker packer(c);
  for (workloads::Shard& s : layout.shards(rank)) {
    std::string file = packer.pack(rank, scaled_bytes(s, c.scale)).value_or(shard_file(c, layout, rank, s));
    auto [it, inserted] = index.try_emplace(file, groups.size());
    if (inserted) groups.push_back({std::move(file), {}});
    groups[it->second].shards.push_back(std::move(s));
  }
  return groups;
}

}  // namespace

backends::DatasetPiece dataset_piece(const PlacedShard& placed) {
  const workloads::Shard& s = placed.shard;
  backends::DatasetPiece piece;
  piece.name = std::string(workloads::state_kind_name(s.state)) + "/" + s.name;
  piece.dtype = std::string(workloads::dtype_name(s.dtype));
  piece.element_bytes = static_cast<std::uint32_t>(workloads::dtype_bytes(s.dtype));
  for (const std::int64_t d : s.global_shape) piece.global_shape.push_back(static_cast<std::uint64_t>(d));
  for (const std::int64_t d : s.offset) piece.offset.push_back(static_cast<std::uint64_t>(d));
  for (const std::int64_t d : s.extent) piece.extent.push_back(static_cast<std::uint64_t>(d));
  piece.flat_begin = static_cast<std::uint64_t>(s.flat_begin);
  piece.flat_end = piece.flat_begin + placed.bytes / piece.element_bytes;
  piece.memory_offset = placed.memory_offset;
  return piece;
}

std::map<std::string, std::string> checkpoint_attributes(const workloads::Layout& layout, const Case& c) {
  const workloads::ParallelSpec& p = layout.parallel();
  std::map<std::string, std::string> a;
  a["model"] = c.model_argument;
  a["parameters"] = std::to_string(layout.parameters());
  a["tp"] = std::to_string(p.tp);
  a["pp"] = std::to_string(p.pp);
  a["dp"] = std::to_string(p.dp);
  a["ep"] = std::to_string(p.ep);
  a["zero"] = std::to_string(p.zero_stage);
  a["world_size"] = std::to_string(layout.world_size());
  const workloads::StateSpec& state = layout.state();
  a["state"] = state.scope == workloads::StateScope::weights ? "weights" : "full";
  a["weight_dtype"] = std::string(workloads::dtype_name(state.weight_dtype));
  a["master_dtype"] = state.master_dtype ? std::string(workloads::dtype_name(*state.master_dtype)) : "none";
  a["optimizer_dtype"] = std::string(workloads::dtype_name(state.optimizer_dtype));
  a["scale"] = std::to_string(c.scale);
  a["mapping"] = std::string(mapping_name(c.mapping));
  a["writer"] = "ckptbench";
  return a;
}

std::uint64_t scaled_bytes(const workloads::Shard& shard, std::int64_t scale) {
  const std::int64_t elements = std::max<std::int64_t>(1, shard.elements() / std::max<std::int64_t>(1, scale));
  return static_cast<std::uint64_t>(elements * workloads::dtype_bytes(shard.dtype));
}

std::vector<std::int64_t> selected_ranks(const Case& c, std::int64_t world_size) {
  std::vector<std::int64_t> ranks;
  switch (c.ranks.select) {
    case RankSelect::all:
      for (std::int64_t r = 0; r < world_size; ++r) ranks.push_back(r);
      break;
    case RankSelect::list: ranks = c.ranks.list; break;
    case RankSelect::node: {
      const std::int64_t first = c.ranks.node * c.ranks.gpus_per_node;
      for (std::int64_t r = first; r < std::min(world_size, first + c.ranks.gpus_per_node); ++r) ranks.push_back(r);
      break;
    }
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::vector<RankPlan> plan_ranks(const workloads::Layout& layout, const Case& c,
                                 const std::vector<std::int64_t>& ranks,
                                 const std::filesystem::path& checkpoint_dir) {
  const bool shared = mapping_shares_files(c.mapping);
  const SharedFiles shared_files = shared ? place_shared_files(layout, c, ranks) : SharedFiles{};
  const std::uint64_t align = alignment_of(c);
  const auto attributes = checkpoint_attributes(layout, c);
  std::vector<RankPlan> plans;
  if (c.format == CheckpointFormat::safetensors) {
    const SafetensorsFiles files(layout, c);
    for (std::int64_t rank : ranks) {
      RankPlan& plan = plans.emplace_back();
      plan.rank = rank;
      plan.io.attributes = attributes;
      plan_safetensors_rank(files, c, rank, checkpoint_dir, plan);
    }
    return plans;
  }
  for (std::int64_t rank : ranks) {
    RankPlan& plan = plans.emplace_back();
    plan.rank = rank;
    plan.io.attributes = attributes;
    for (FileGroup& group : group_by_file(layout, c, rank)) {
      const std::uint64_t file_base = shared ? shared_files.region_offset.at(rank) : 0;
      const std::uint64_t memory_base = align_up(plan.buffer_bytes, align);
      std::uint64_t pos = 0;
      std::vector<backends::Extent> shard_extents;
      std::vector<backends::DatasetPiece> file_pieces;
      for (workloads::Shard& s : group.shards) {
        pos = align_up(pos, align);
        PlacedShard& placed = plan.shards.emplace_back();
        placed.bytes = scaled_bytes(s, c.scale);
        placed.rank = rank;
        placed.file = group.file;
        placed.file_offset = file_base + pos;
        placed.memory_offset = memory_base + pos;
        placed.data_key = shard_data_key(s, c.seed);
        placed.shard = std::move(s);
        file_pieces.push_back(dataset_piece(placed));
        shard_extents.push_back({placed.file_offset, placed.memory_offset,
                                 c.io.direct ? align_up(placed.bytes, align) : placed.bytes});
        plan.payload_bytes += placed.bytes;
        pos += placed.bytes;
      }
      const std::uint64_t region = align_up(pos, align);
      plan.buffer_bytes = memory_base + region;
      backends::FilePlan file;
      file.path = (checkpoint_dir / group.file).string();
      file.extents = build_extents(std::move(shard_extents), c.coalesce_bytes, c.chunk_bytes, c.io.direct ? align : 1);
      file.shared = shared;
      file.datasets = std::move(file_pieces);
      // A shared file's writer reserves its own region: the world's regions may be far larger
      // than what the selected ranks write.
      file.reserve_offset = file_base;
      file.file_size = file_base + region;
      plan.io.files.push_back(std::move(file));
    }
  }
  return plans;
}

std::string checkpoint_dir_name(DirectoryLayout layout, std::int64_t step) {
  switch (layout) {
    case DirectoryLayout::megatron: return fmt::format("iter_{:07d}", step);
    case DirectoryLayout::deepspeed: return fmt::format("global_step{}", step);
    case DirectoryLayout::dcp: break;
  }
  return fmt::format("step_{:07d}", step);
}

}  // namespace ckpt::harness
