#include "harness/loadplan/reshard_restore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/manifest_checks.hpp"
#include "harness/common/align.hpp"
#include "harness/plan/extent_builder.hpp"
#include "harness/plan/file_naming.hpp"
#include "harness/plan/framework_shards.hpp"
#include "harness/plan/item_framing.hpp"
#include "harness/plan/training_state.hpp"

namespace ckpt::harness {
namespace {

void check_reshardable(const ReshardSpec& spec) {
  if (spec.backend == "hdf5") {
    throw ReshardError(
        "restore.*: a resharding restore reads byte ranges of the stored pieces, and backend.name "
        "= \"hdf5\" reads "
        "datasets; restore with the writer's layout, or write with a raw-bytes backend (posix, "
        "uring, mpiio)");
  }
}

// backend.direct reads whole aligned blocks: the last block of a stored file must be whole.
void check_direct_file_sizes(const ReshardSpec& spec, const RankPlan& plan,
                             const std::filesystem::path& dir) {
  if (spec.direct_alignment == 0) return;
  const std::uint64_t alignment = spec.direct_alignment;
  std::map<std::size_t, std::uint64_t> end_of;  // file -> end of its last aligned request
  for (const ByteRange& r : plan.reshard.requests) {
    end_of[r.file] = std::max(end_of[r.file], r.file_offset + r.length);
  }
  for (const auto& [file, end] : end_of) {
    const std::filesystem::path path = dir / plan.reshard.files[file];
    std::error_code error;
    const std::uintmax_t size = std::filesystem::file_size(path, error);
    if (error || size >= end) continue;  // a missing file is the read's error, with its path
    throw ReshardError(fmt::format(
        "restore.*: {} is {} bytes, not a multiple of backend.direct_alignment = {}, and a "
        "resharding read with "
        "backend.direct = true reads its last block whole (to byte {}); write the checkpoint with "
        "backend.direct = true or strategy.alignment = {} (files then end on a whole block), or "
        "restore with "
        "backend.direct = false",
        path.string(), size, alignment, end, alignment));
  }
}

StoredPieces stored_pieces(const Manifest& manifest) {
  const bool framed =
      manifest.writer.framing && writes_distcp_items(manifest.layout.directory_layout);
  StoredPieces stored;
  for (const ManifestTensor& t : manifest.tensors) {
    const ItemFraming framing =
        framed ? archive_framing(t.shard, manifest.layout.scale) : ItemFraming{};
    stored[{t.shard.state, t.shard.name}].push_back({t.stored_file(), t.file_offset,
                                                     shard_geometry(t.shard, manifest.layout.scale),
                                                     framing.before, framing.after});
  }
  return stored;
}

// The IoPlan of `plan`'s reads: one FilePlan per file in first-use order, its extents shaped as
// the writer shapes its own (build_extents), with the hdf5 dataset pieces of the shards stored in
// it (identity plans; a resharded shard has no one file).
void add_file_plans(RankPlan& plan, const ReshardSpec& spec, const std::filesystem::path& dir) {
  const std::vector<std::string>& files = plan.reshard.files;
  std::vector<std::vector<backends::Extent>> per_file(files.size());
  for (const ByteRange& r : plan.reshard.requests) per_file[r.file].push_back(r.extent());
  std::map<std::string, std::size_t> index;
  for (std::size_t f = 0; f < files.size(); ++f) {
    backends::FilePlan& file = plan.io.files.emplace_back();
    file.path = (dir / files[f]).string();
    file.extents = build_extents(std::move(per_file[f]), spec.coalesce_bytes, spec.chunk_bytes,
                                 std::max<std::uint64_t>(1, spec.direct_alignment));
    file.shared = spec.shared_files;
    index[files[f]] = f;
  }
  for (const PlacedShard& s : plan.shards) {
    if (const auto it = index.find(s.file); it != index.end())
      plan.io.files[it->second].datasets.push_back(dataset_piece(s));
  }
}

// restore.replicas = "cooperative" into another layout: what `rank` of it holds, its replicas'
// copies as the same-layout restore gives them: its own shards, its DP rank 0's of the state
// replicated across DP, and on a TP rank other than 0 what TP rank 0 of its (DP, PP) position
// holds of the TP-replicated tensors (norms, row-parallel biases, routers).
std::vector<workloads::Shard> replica_shards(const workloads::Layout& layout, std::int64_t rank) {
  const std::int64_t tp = layout.parallel().tp;
  const auto with_dp_copies = [&](std::int64_t r) {
    std::vector<workloads::Shard> shards = layout.shards(r);
    const std::int64_t dp = layout.coord(r).dp;
    if (dp == 0) return shards;
    for (workloads::Shard& s : layout.shards(r - tp * dp)) {
      if (layout.replicated_across_dp(s.state)) shards.push_back(std::move(s));
    }
    return shards;
  };
  std::vector<workloads::Shard> shards = with_dp_copies(rank);
  const std::int64_t t = layout.coord(rank).tp;
  if (t == 0) return shards;
  for (workloads::Shard& s : with_dp_copies(rank - t)) {
    if (tp_replicated(s)) shards.push_back(std::move(s));
  }
  return shards;
}

// A delta checkpoint read into another layout: every byte a request reads of a base piece that a
// changed run of the checkpoint replaces is read from that run too, into scratch after the rank's
// buffer, and copied where the request put the base byte before any other copy (which may move it
// on to its shard); the base bytes it replaces count as read.
void add_delta_over_reads(RankReadPlan& r, const Manifest& manifest) {
  std::map<std::string, std::vector<const ManifestTensor*>> changed;  // by the base's file
  for (const ManifestTensor& t : manifest.tensors) {
    if (!t.delta.empty()) changed[t.stored_file()].push_back(&t);
  }
  const std::uint64_t first = align_up(r.buffer_bytes, 64);
  std::uint64_t scratch = first;
  std::vector<ByteRange> reads;
  std::vector<BufferCopy> over;
  for (const ByteRange& q : r.requests) {
    const auto pieces = changed.find(r.files[q.file]);
    if (pieces == changed.end()) continue;
    for (const ManifestTensor* t : pieces->second) {
      for (const DeltaRun& run : t->delta) {
        const std::uint64_t start = t->file_offset + run.offset;  // in the base's file
        const std::uint64_t from = std::max(q.file_offset, start);
        const std::uint64_t to = std::min(q.file_offset + q.length, start + run.bytes);
        if (from >= to) continue;
        auto file = std::find(r.files.begin(), r.files.end(), t->delta_file);
        if (file == r.files.end()) file = r.files.insert(r.files.end(), t->delta_file);
        reads.push_back({static_cast<std::size_t>(file - r.files.begin()),
                         run.file_offset + (from - start), scratch, to - from});
        over.push_back({scratch, q.memory_offset + (from - q.file_offset), to - from});
        r.bytes_read += to - from;
        scratch += to - from;
      }
    }
  }
  r.requests.insert(r.requests.end(), reads.begin(), reads.end());
  r.copies.insert(r.copies.begin(), over.begin(), over.end());
  if (scratch > first) r.buffer_bytes = scratch;
}

// `manifest`: the checkpoint; its training iteration (Manifest::iteration) and, of a delta, its
// step seed the bytes verified and the padding rows written alike.
RankPlan plan_rank(const workloads::Layout& layout, const ReshardSpec& spec, std::int64_t rank,
                   const StoredPieces& stored, const std::filesystem::path& dir,
                   const Manifest& manifest) {
  const SelectiveSpec& z = manifest.writer.selective;
  const BlockUpdates updates =
      z.delta() ? BlockUpdates{z.block_bytes, z.changed_per_million, manifest.step}
                : BlockUpdates{};
  const std::uint64_t direct_alignment = spec.direct_alignment;
  const std::uint64_t align = std::max<std::uint64_t>({64, spec.alignment, direct_alignment});
  RankPlan plan;
  plan.rank = rank;
  std::vector<NeededShard> needed;
  std::uint64_t pos = 0;
  const bool replicas = spec.reader.replicas == ReplicaRead::cooperative;
  for (workloads::Shard& s : replicas ? replica_shards(layout, rank) : layout.shards(rank)) {
    const ShardGeometry geometry = shard_geometry(s, spec.scale);
    if (geometry.elements() <= 0) continue;
    pos = align_up(pos, align);
    PlacedShard& placed = plan.shards.emplace_back();
    placed.rank = rank;
    placed.memory_offset = pos;
    placed.bytes = geometry.bytes();
    placed.data_key = shard_data_key(s, spec.seed, spec.pattern);
    placed.updates = updates;
    shard_at_iteration(placed, manifest.iteration());
    placed.geometry = geometry;
    needed.push_back({s.name, s.state, geometry, pos});
    placed.shard = std::move(s);
    pos += placed.bytes;
  }
  plan.reshard = plan_rank_reads(needed, stored, spec.reader.read, pos, align,
                                 {.gap_bytes = spec.reader.gap_bytes,
                                  .direct_alignment = direct_alignment,
                                  .merge_adjacent = spec.merge_adjacent});
  if (z.delta() && !plan.reshard.padding.empty())
    throw ReshardError(fmt::format(
        "the checkpoint is a delta checkpoint (strategy.delta_every = {}), and rank {} of this "
        "layout pads rows of {} beyond the stored tensor, which the update's blocks do not "
        "cover: restore the writer's TP, or write a full checkpoint",
        z.delta_every, rank, plan.shards[plan.reshard.padding.front().shard].shard.name));
  add_delta_over_reads(plan.reshard, manifest);
  check_direct_file_sizes(spec, plan, dir);
  for (PaddingRun& p : plan.reshard.padding) p.key = plan.shards[p.shard].data_key;
  plan.payload_bytes =
      plan.reshard.bytes_needed;  // what the restore moves from storage; padding is not read
  plan.buffer_bytes = plan.reshard.buffer_bytes;
  add_file_plans(plan, spec, dir);
  return plan;
}

// A delta checkpoint's pieces: after the base's whole pieces, the runs this checkpoint holds are
// read into scratch after the rank's buffer and copied over the base's bytes once every read is
// done (the requests of one plan run in any order); the base bytes they replace count as read.
void add_delta_reads(RankPlan& plan, const std::vector<const ManifestTensor*>& entries) {
  RankReadPlan& r = plan.reshard;
  const std::uint64_t first = align_up(r.buffer_bytes, 64);
  std::uint64_t scratch = first;
  for (const ManifestTensor* t : entries) {
    if (t->delta.empty()) continue;
    auto file = std::find(r.files.begin(), r.files.end(), t->delta_file);
    if (file == r.files.end()) file = r.files.insert(r.files.end(), t->delta_file);
    const auto index = static_cast<std::size_t>(file - r.files.begin());
    for (const DeltaRun& run : t->delta) {
      r.requests.push_back({index, run.file_offset, scratch, run.bytes});
      r.copies.push_back({scratch, t->memory_offset + run.offset, run.bytes});
      r.bytes_read += run.bytes;
      scratch += run.bytes;
    }
  }
  if (scratch > first) r.buffer_bytes = scratch;
}

}  // namespace

RankPlan plan_identity_rank(const Manifest& manifest, const ReshardSpec& spec, std::int64_t rank,
                            const std::vector<const ManifestTensor*>& entries,
                            const std::filesystem::path& dir) {
  const std::uint64_t block = std::max<std::uint64_t>(1, spec.direct_alignment);
  RankPlan plan;
  plan.rank = rank;
  std::vector<NeededShard> needed;
  std::uint64_t shards_end = 0;
  // strategy.delta_every: each block's bytes as the update left them at the checkpoint's step
  // (under [training], its iteration's: shard_at_iteration).
  const SelectiveSpec& z = manifest.writer.selective;
  const BlockUpdates updates =
      z.delta() ? BlockUpdates{z.block_bytes, z.changed_per_million, manifest.step}
                : BlockUpdates{};
  for (const ManifestTensor* t : entries) {
    const ShardGeometry geometry = shard_geometry(t->shard, manifest.layout.scale);
    // A [training] selective checkpoint's piece held by an earlier one is at that one's iteration.
    shard_at_iteration(plan.shards.emplace_back(PlacedShard{.shard = t->shard,
                                                            .rank = rank,
                                                            .file = t->file,
                                                            .file_offset = t->file_offset,
                                                            .memory_offset = t->memory_offset,
                                                            .bytes = t->bytes,
                                                            .data_key = t->data_key,
                                                            .geometry = geometry,
                                                            .updates = updates}),
                       t->iteration_in(manifest.iteration()));
    needed.push_back({.name = t->shard.name,
                      .state = t->shard.state,
                      .geometry = geometry,
                      .memory_offset = t->memory_offset,
                      .stored_as = StoredPiece{t->stored_file(), t->file_offset, geometry}});
    shards_end = std::max(shards_end, t->memory_offset + t->bytes);
  }
  plan.reshard =
      plan_rank_reads(needed, {}, ReshardRead::exact, shards_end, std::max(block, spec.alignment),
                      {.merge_adjacent = spec.merge_adjacent, .whole_piece_granule = block});
  add_delta_reads(plan, entries);
  plan.payload_bytes = plan.reshard.bytes_needed;
  plan.buffer_bytes = plan.reshard.buffer_bytes;
  add_file_plans(plan, spec, dir);
  return plan;
}

namespace {

std::vector<RankPlan> identity_plans(const Manifest& manifest, const ReshardSpec& spec,
                                     std::vector<std::int64_t> ranks,
                                     const std::filesystem::path& dir) {
  if (const auto outside = manifest_path_problem(manifest, dir)) throw std::runtime_error(*outside);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::map<std::int64_t, std::vector<const ManifestTensor*>> entries;
  for (const std::int64_t rank : ranks) entries[rank];
  for (const ManifestTensor& t : manifest.tensors) {
    if (const auto it = entries.find(t.rank); it != entries.end()) it->second.push_back(&t);
  }
  std::vector<RankPlan> plans;
  for (const auto& [rank, mine] : entries)
    plans.push_back(plan_identity_rank(manifest, spec, rank, mine, dir));
  return plans;
}

}  // namespace

std::vector<std::int64_t> restore_selected_ranks(const Case& c) {
  Case reader = c;
  reader.ranks = c.restore.ranks;
  return selected_ranks(reader, c.restore.parallel.world_size());
}

ReshardSpec reshard_spec(const Case& c) {
  return {.model = c.model,
          .scale = c.scale,
          .seed = c.seed,
          .writer = c.parallel,
          .reader = c.restore,
          .alignment = c.alignment,
          .direct_alignment = c.io.direct ? c.io.direct_alignment : 0,
          .chunk_bytes = c.chunk_bytes,
          .shared_files = mapping_shares_files(c.mapping),
          .backend = c.backend,
          .pattern = c.data};
}

ReshardSpec identity_spec(const Case& c) {
  ReshardSpec spec = reshard_spec(c);
  spec.identity = true;
  spec.direct_alignment = c.io.direct ? std::max<std::uint64_t>(1, c.alignment) : 0;
  spec.merge_adjacent = false;
  spec.coalesce_bytes = c.coalesce_bytes;
  return spec;
}

std::vector<RankPlan> reshard_plans(const Manifest& manifest, const ReshardSpec& spec,
                                    const std::vector<std::int64_t>& ranks,
                                    const std::filesystem::path& dir) {
  // Its pieces are frames: a range of a tensor is not where the plan would read it.
  if (const CompressionSpec& z = manifest.writer.compression; z.enabled()) {
    throw ReshardError(fmt::format(
        "the checkpoint's pieces are compressed (strategy.compression = \"{}\"): only a restore "
        "into the writer's layout reads them (campaign.phase = \"restore\", no [restore] layout, "
        "no load)",
        compression_name(z.codec)));
  }
  if (spec.identity) return identity_plans(manifest, spec, ranks, dir);
  if (const auto older = std::find_if(manifest.tensors.begin(), manifest.tensors.end(),
                                      [&](const ManifestTensor& t) {
                                        return t.iteration_in(manifest.iteration()) !=
                                               manifest.iteration();
                                      });
      older != manifest.tensors.end()) {
    throw ReshardError(fmt::format(
        "the checkpoint holds pieces of several training iterations (tensor {} is iteration {}'s, "
        "from {}; the checkpoint's is {}): a piece of another layout would mix them, so only a "
        "restore into the writer's layout reads it (no [restore] layout, no load)",
        older->shard.name, *older->iteration, older->checkpoint, manifest.iteration()));
  }
  check_reshardable(spec);
  const workloads::Layout layout(spec.model, spec.reader.parallel, spec.reader.state);
  // A damaged or hostile manifest must not make a read open files outside its checkpoint.
  if (const auto outside = manifest_path_problem(manifest, dir)) throw std::runtime_error(*outside);
  const StoredPieces stored = stored_pieces(manifest);
  std::vector<RankPlan> plans;
  try {
    for (const std::int64_t rank : ranks)
      plans.push_back(plan_rank(layout, spec, rank, stored, dir, manifest));
    // One process moves its ranks one after the other. Ranks that read parts of the same stored
    // files go back to back (TP8×PP4 -> TP4×PP8: new ranks (t', 0) and (t', 1) read the two
    // halves of the layers of old files 2t' and 2t'+1), so the second reads while the first's
    // readahead is fresh instead of after every other file: closer to the concurrent reads of a
    // real restart, and measured 1.4× faster on this machine.
    const auto first_file = [](const RankPlan& p) {
      return p.reshard.files.empty() ? std::string() : p.reshard.files.front();
    };
    std::stable_sort(plans.begin(), plans.end(), [&](const RankPlan& a, const RankPlan& b) {
      return first_file(a) < first_file(b);
    });
  } catch (const ReshardError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw ReshardError(fmt::format(
        "restore (TP {} × PP {} × DP {}) of a checkpoint written with TP {} × PP {} × DP {}: {}",
        spec.reader.parallel.tp, spec.reader.parallel.pp, spec.reader.parallel.dp, spec.writer.tp,
        spec.writer.pp, spec.writer.dp, e.what()));
  }
  return plans;
}

void fill_reshard_padding(const std::vector<RankPlan>& plans,
                          const std::vector<std::uint64_t>& offsets, Buffer& buffer,
                          DataPattern pattern) {
  std::vector<PatternRange> ranges;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const PaddingRun& run : plans[p].reshard.padding) {
      ranges.push_back({offsets[p] + run.memory_offset, run.bytes, run.key, run.global_offset});
    }
  }
  if (!ranges.empty()) buffer.fill(ranges, pattern);
}

void apply_reshard_copies(const std::vector<RankPlan>& plans,
                          const std::vector<std::uint64_t>& offsets, Buffer& buffer) {
  const backends::MemoryView view = buffer.view();
  std::vector<std::byte> bounce;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const BufferCopy& copy : plans[p].reshard.copies) {
      if (view.kind != backends::MemoryKind::device) {
        std::memcpy(view.data + offsets[p] + copy.to, view.data + offsets[p] + copy.from,
                    copy.length);
      } else {  // device memory: through the host (a benchmark of reads, not of device copies)
        bounce.resize(copy.length);
        buffer.copy_to_host(offsets[p] + copy.from, bounce);
        buffer.copy_from_host(offsets[p] + copy.to, bounce);
      }
    }
  }
}

}  // namespace ckpt::harness
