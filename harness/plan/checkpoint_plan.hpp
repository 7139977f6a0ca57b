#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/plan/block_updates.hpp"
#include "harness/plan/reshard_plan.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// One shard placed in the checkpoint: its file and offset, its place in the rank's buffer, and
// the identity its deterministic data is derived from.
struct PlacedShard {
  workloads::Shard shard;    // as the layout gives it (unscaled)
  std::int64_t rank = 0;     // modeled rank that writes it
  std::int64_t holder = -1;  // the DP rank Megatron's distributed optimizer gathers it from
                             // (DpGather); -1 or `rank`: `rank` holds it
  std::string file;          // path relative to the checkpoint directory
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  std::uint64_t bytes = 0;     // bytes written: shard bytes divided by the case's scale
  std::uint64_t data_key = 0;  // seeds the deterministic bytes of the shard's tensor
  ShardGeometry geometry;      // where its bytes lie in the (scaled) tensor
  // strategy.compression (stored_plan): the shard's frames, stored_bytes of them at file_offset,
  // lie at stored_offset of the stored plan's buffer; `bytes` and `memory_offset` stay the
  // logical ones. 0: stored raw.
  std::uint64_t stored_bytes = 0;
  std::uint64_t stored_offset = 0;
  // strategy.delta_every: the update model and the step the shard's bytes are at (each block's
  // bytes seeded by block_key); inactive: data_key seeds them all.
  BlockUpdates updates;
};

// Bytes a file holds besides its shards (a safetensors header), at `memory_offset` of the rank's
// buffer, which mirrors the file: fill_plans writes them, verify_plans checks them.
struct FileHeader {
  std::string file;  // relative to the checkpoint directory
  std::uint64_t memory_offset = 0;
  std::string bytes;
};

// What one modeled rank writes: its shards in placement order, its buffer (which mirrors its
// regions of its files, padding included) and the extents the backend moves.
struct RankPlan {
  std::int64_t rank = 0;
  std::vector<PlacedShard> shards;
  std::uint64_t buffer_bytes = 0;   // memory needed, alignment padding included
  std::uint64_t payload_bytes = 0;  // sum of shard bytes (torch.save framing not included)
  std::vector<FileHeader> headers;  // strategy.format = "safetensors": one per file
  backends::IoPlan io;              // paths absolute (under the checkpoint directory)
  RankReadPlan reshard;  // resharding restore only: its reads (as io), copies, padding, counts
};

// The shard as a tensor piece (hdf5 datasets "<state>/<tensor>"): its flat range shortened to
// its scaled bytes, its memory offset as placed.
backends::DatasetPiece dataset_piece(const PlacedShard& placed);

// Facts about the checkpoint that self-describing formats record (IoPlan::attributes).
std::map<std::string, std::string> checkpoint_attributes(const workloads::Layout& layout,
                                                         const Case& c);

// Shard bytes after scaling (ShardGeometry): whole elements; 0 for a ZeRO piece too small to
// keep an element of the scaled tensor (such shards are not placed).
std::uint64_t scaled_bytes(const workloads::Shard& shard, std::int64_t scale);

// Every shard of `plans` as pattern runs of a buffer whose plan p starts at plan_offsets[p]:
// one run per GlobalRun of each shard (per block of it, with the block's key, when its updates
// are active), in plan and shard order; `owner` (when given) receives each run's (plan, shard)
// index. `changed_after` >= 0: only the runs of blocks an update after that step changed (what
// moving the buffer from that step to the shards' step rewrites).
std::vector<PatternRange> shard_pattern_ranges(
    const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& plan_offsets,
    std::vector<std::pair<std::size_t, std::size_t>>* owner = nullptr,
    std::int64_t changed_after = -1);

// The shard's bytes as runs of its tensor's global bytes (a shard without a place in a tensor: one
// run from global byte 0), split at its blocks with their versions when its updates are active.
std::vector<BlockPart> shard_block_parts(const PlacedShard& placed);

// The modeled ranks a case emulates (all, a list, or one node's share), sorted.
std::vector<std::int64_t> selected_ranks(const Case& c, std::int64_t world_size);

// Builds the plans of `ranks` for one checkpoint written to `checkpoint_dir`. Files shared by
// several ranks (file_per_node, shared_file) get every writer's region at the same offsets
// whichever ranks this process builds, because offsets depend only on the layout and case.
std::vector<RankPlan> plan_ranks(const workloads::Layout& layout, const Case& c,
                                 const std::vector<std::int64_t>& ranks,
                                 const std::filesystem::path& checkpoint_dir);

// Name of the directory of checkpoint number `step` in the case's directory layout
// (dcp: "step_0000001", megatron: "iter_0000001", deepspeed: "global_step1").
std::string checkpoint_dir_name(DirectoryLayout layout, std::int64_t step);

}  // namespace ckpt::harness
