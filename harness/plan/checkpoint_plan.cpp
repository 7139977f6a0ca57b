#include "harness/plan/checkpoint_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "harness/common/align.hpp"
#include "harness/memory/checksum.hpp"
#include "harness/plan/deepspeed_zero3.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/framework_file_rest.hpp"
#include "harness/plan/framework_shards.hpp"
#include "harness/plan/item_framing.hpp"
#include "harness/plan/safetensors_plan.hpp"
#include "harness/plan/stand_in_text.hpp"

namespace ckpt::harness {
namespace {

std::uint64_t alignment_of(const Case& c) {
  return std::max<std::uint64_t>(1, c.alignment);
}

// Bytes one rank's region of a shared file occupies: shards placed back to back at aligned
// offsets, the end rounded up for direct I/O. Must match plan_file() below.
std::uint64_t region_bytes(const workloads::Layout& layout, const Case& c, std::int64_t rank) {
  const std::uint64_t align = alignment_of(c);
  std::uint64_t pos = 0;
  for (const workloads::Shard& s : written_shards(layout, c, rank)) {
    const std::uint64_t bytes = scaled_bytes(s, c.scale);
    if (bytes > 0) pos = align_up(pos, align) + item_framing(s, c).item_bytes(bytes);
  }
  return align_up(pos, align);
}

// Where each rank's region starts in the shared files of the selected ranks, and file sizes.
struct SharedFiles {
  std::map<std::int64_t, std::uint64_t> region_offset;  // rank -> offset in its file
  std::map<std::int64_t, std::uint64_t> file_size;      // group -> bytes
};

std::pair<std::int64_t, std::int64_t> group_ranks(const Case& c, std::int64_t world,
                                                  std::int64_t rank) {
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
  std::vector<std::int64_t> holders;  // per shard: written_shards' holder
};

// file_per_tensor with coalescing packs tensors smaller than coalesce_bytes into shared
// files of up to coalesce_bytes each (TorchSnapshot / ByteCheckpoint-style small-tensor
// buckets); larger tensors keep a file of their own.
class TensorPacker {
 public:
  explicit TensorPacker(const Case& c)
      : limit_(c.mapping == Mapping::file_per_tensor ? c.coalesce_bytes : 0) {}

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

// Bytes of a file that are no tensor of the layout (DeepSpeed's engine state, the rest of its
// optimizer file).
std::string deepspeed_stand_in(const std::string& what, const std::string& file,
                               std::uint64_t bytes) {
  return stand_in_text("ckptbench stand-in for DeepSpeed's " + what + " (" + file + ")\n", bytes);
}

// Appends `bytes` of stand-in text at `file_offset` of `file` (and at the end of the rank's
// buffer).
void append_stand_in(backends::FilePlan& file, std::uint64_t file_offset, const std::string& name,
                     std::string text, const Case& c, RankPlan& plan) {
  const std::uint64_t align = alignment_of(c);
  const std::uint64_t memory_base = align_up(plan.buffer_bytes, align);
  const std::uint64_t bytes = text.size();
  const std::uint64_t region = align_up(bytes, align);
  file.extents.push_back({file_offset, memory_base, c.io.direct ? region : bytes});
  file.file_size = file_offset + region;
  plan.headers.push_back({name, memory_base, std::move(text)});
  plan.buffer_bytes = memory_base + region;
  plan.payload_bytes += bytes;
}

// A file of no tensors (DeepSpeed's engine state).
void add_engine_state_file(const EngineStateFile& engine, const std::string& what, const Case& c,
                           const std::filesystem::path& dir, RankPlan& plan) {
  backends::FilePlan file;
  file.path = (dir / engine.file).string();
  append_stand_in(file, 0, engine.file, deepspeed_stand_in(what, engine.file, engine.bytes), c,
                  plan);
  plan.io.files.push_back(std::move(file));
}

// Framing bytes of an item at `memory_offset` of the rank's buffer (none when empty).
void add_framing(RankPlan& plan, const std::string& file, std::uint64_t memory_offset,
                 std::string text) {
  if (!text.empty()) plan.headers.push_back({file, memory_offset, std::move(text)});
}

std::vector<FileGroup> group_by_file(const workloads::Layout& layout, const Case& c,
                                     std::int64_t rank) {
  std::vector<FileGroup> groups;
  std::map<std::string, std::size_t> index;
  TensorPacker packer(c);
  std::vector<std::int64_t> holders;
  std::vector<workloads::Shard> shards = written_shards(layout, c, rank, &holders);
  const std::vector<std::string> files = shard_files(c, layout, rank, shards);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    workloads::Shard& s = shards[i];
    if (scaled_bytes(s, c.scale) == 0) continue;
    std::string file = packer.pack(rank, scaled_bytes(s, c.scale)).value_or(files[i]);
    auto [it, inserted] = index.try_emplace(file, groups.size());
    if (inserted) groups.push_back({std::move(file), {}, {}});
    groups[it->second].shards.push_back(std::move(s));
    groups[it->second].holders.push_back(holders[i]);
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
  for (const std::int64_t d : s.global_shape)
    piece.global_shape.push_back(static_cast<std::uint64_t>(d));
  for (const std::int64_t d : s.offset) piece.offset.push_back(static_cast<std::uint64_t>(d));
  for (const std::int64_t d : s.extent) piece.extent.push_back(static_cast<std::uint64_t>(d));
  piece.flat_begin = static_cast<std::uint64_t>(s.flat_begin);
  piece.flat_end = piece.flat_begin + placed.bytes / piece.element_bytes;
  piece.memory_offset = placed.memory_offset;
  return piece;
}

std::map<std::string, std::string> checkpoint_attributes(const workloads::Layout& layout,
                                                         const Case& c) {
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
  a["master_dtype"] =
      state.master_dtype ? std::string(workloads::dtype_name(*state.master_dtype)) : "none";
  a["optimizer_dtype"] = std::string(workloads::dtype_name(state.optimizer_dtype));
  if (state.weights != workloads::WeightFormat::unquantized)
    a["weights"] = std::string(workloads::weight_format_name(state.weights));
  a["scale"] = std::to_string(c.scale);
  a["mapping"] = std::string(mapping_name(c.mapping));
  a["writer"] = "ckptbench";
  return a;
}

std::uint64_t scaled_bytes(const workloads::Shard& shard, std::int64_t scale) {
  return shard_geometry(shard, scale).bytes();
}

std::vector<BlockPart> shard_block_parts(const PlacedShard& ps) {
  std::vector<BlockPart> parts;
  if (ps.geometry.global_shape.empty()) {
    split_into_blocks(ps.updates, ps.data_key, 0, 0, ps.bytes, parts);
    return parts;
  }
  const auto eb = static_cast<std::uint64_t>(ps.geometry.element_bytes);
  for (const GlobalRun& run : global_runs(ps.geometry))
    split_into_blocks(ps.updates, ps.data_key, static_cast<std::uint64_t>(run.local) * eb,
                      static_cast<std::uint64_t>(run.global) * eb,
                      static_cast<std::uint64_t>(run.elements) * eb, parts);
  return parts;
}

std::vector<PatternRange> shard_pattern_ranges(
    const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& plan_offsets,
    std::vector<std::pair<std::size_t, std::size_t>>* owner, std::int64_t changed_after) {
  std::vector<PatternRange> ranges;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (std::size_t i = 0; i < plans[p].shards.size(); ++i) {
      const PlacedShard& ps = plans[p].shards[i];
      const std::uint64_t block = ps.updates.block_bytes;
      for (const BlockPart& part : shard_block_parts(ps)) {
        if (part.version <= changed_after) continue;
        const std::uint64_t key = part.version == 0
                                      ? ps.data_key
                                      : block_key(ps.data_key, part.global / block, part.version);
        ranges.push_back(
            {plan_offsets[p] + ps.memory_offset + part.local, part.bytes, key, part.global});
        if (owner != nullptr) owner->emplace_back(p, i);
      }
    }
  }
  return ranges;
}

std::vector<std::int64_t> selected_ranks(const Case& c, std::int64_t world_size) {
  std::vector<std::int64_t> ranks;
  switch (c.ranks.select) {
    case RankSelect::all:
      for (std::int64_t r = 0; r < world_size; ++r) ranks.push_back(r);
      break;
    case RankSelect::list:
      ranks = c.ranks.list;
      break;
    case RankSelect::node: {
      const std::int64_t first = c.ranks.node * c.ranks.gpus_per_node;
      for (std::int64_t r = first; r < std::min(world_size, first + c.ranks.gpus_per_node); ++r)
        ranks.push_back(r);
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
    std::vector<FileGroup> groups = group_by_file(layout, c, rank);
    // FSDP2's empty chunks (ranks past a tensor's last row) are items too: torch.save frames an
    // empty tensor. They follow the rank's tensors in its one file.
    const std::string empty_chunk_file =
        frames_items(c) && c.mapping == Mapping::file_per_rank && !groups.empty()
            ? groups.back().file
            : std::string();
    for (FileGroup& group : groups) {
      const std::uint64_t file_base = shared ? shared_files.region_offset.at(rank) : 0;
      const std::uint64_t memory_base = align_up(plan.buffer_bytes, align);
      std::uint64_t pos = 0;
      std::vector<backends::Extent> shard_extents;
      std::vector<backends::DatasetPiece> file_pieces;
      std::uint64_t unscaled_bytes = 0;
      for (const workloads::Shard& s : group.shards) unscaled_bytes += s.bytes;
      for (std::size_t i = 0; i < group.shards.size(); ++i) {
        workloads::Shard& s = group.shards[i];
        pos = align_up(pos, align);
        const std::uint64_t item = pos;
        const ItemFraming framing = item_framing(s, c);
        add_framing(plan, group.file, memory_base + pos, framing_text(s, framing.before, true));
        pos += framing.before;
        PlacedShard& placed = plan.shards.emplace_back();
        placed.bytes = scaled_bytes(s, c.scale);
        placed.rank = rank;
        placed.holder = group.holders[i];
        placed.file = group.file;
        placed.file_offset = file_base + pos;
        placed.memory_offset = memory_base + pos;
        placed.data_key = shard_data_key(s, c.seed, c.data);
        placed.geometry = shard_geometry(s, c.scale);
        pos += placed.bytes;
        add_framing(plan, group.file, memory_base + pos, framing_text(s, framing.after, false));
        pos += framing.after;
        placed.shard = std::move(s);
        file_pieces.push_back(dataset_piece(placed));
        const std::uint64_t item_bytes = pos - item;
        shard_extents.push_back({file_base + item, memory_base + item,
                                 c.io.direct ? align_up(item_bytes, align) : item_bytes});
        plan.payload_bytes += placed.bytes;
      }
      if (group.file == empty_chunk_file) {
        for (const workloads::Shard& s : layout.empty_chunks(rank)) {
          const ItemFraming framing = item_framing(s, c);
          pos = align_up(pos, align);
          const std::uint64_t item_bytes = framing.item_bytes(0);
          add_framing(plan, group.file, memory_base + pos, framing_text(s, item_bytes, true));
          shard_extents.push_back({file_base + pos, memory_base + pos,
                                   c.io.direct ? align_up(item_bytes, align) : item_bytes});
          pos += item_bytes;
        }
      }
      const std::uint64_t region = align_up(pos, align);
      plan.buffer_bytes = memory_base + region;
      backends::FilePlan file;
      file.path = (checkpoint_dir / group.file).string();
      file.extents = build_extents(std::move(shard_extents), c.coalesce_bytes, c.chunk_bytes,
                                   c.io.direct ? align : 1);
      file.shared = shared;
      file.datasets = std::move(file_pieces);
      // A shared file's writer reserves its own region: the world's regions may be far larger
      // than what the selected ranks write.
      file.reserve_offset = file_base;
      file.file_size = file_base + region;
      if (const auto rest = framework_file_rest(layout, c, rank, group.file, unscaled_bytes)) {
        append_stand_in(
            file, file.file_size, group.file,
            stand_in_text("ckptbench stand-in for the rest of " + group.file + "\n", rest), c,
            plan);
      }
      plan.io.files.push_back(std::move(file));
    }
    if (const auto engine = deepspeed_engine_state_file(c, layout, rank)) {
      add_engine_state_file(*engine, "engine state", c, checkpoint_dir, plan);
    }
    for (const EngineStateFile& script : deepspeed_recovery_scripts(c, layout, rank))
      add_engine_state_file(script, "recovery script", c, checkpoint_dir, plan);
  }
  return plans;
}

std::string checkpoint_dir_name(DirectoryLayout layout, std::int64_t step) {
  switch (layout) {
    case DirectoryLayout::megatron:
    case DirectoryLayout::megatron_dist:
      return fmt::format("iter_{:07d}", step);
    case DirectoryLayout::deepspeed:
      return fmt::format("global_step{}", step);
    case DirectoryLayout::dcp:
      break;
  }
  return fmt::format("step_{:07d}", step);
}

}  // namespace ckpt::harness
