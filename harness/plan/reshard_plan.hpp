#pragma once

// Resharding restore: what each rank of a new parallelism reads from a checkpoint written under
// another. Every needed shard is intersected, in the tensor's global row-major elements, with the
// stored pieces of its tensor (the manifest's), ZeRO flat ranges included; the overlaps become
// read requests, adjacent ones (contiguous in the file and in memory) coalesced. read = exact
// reads only the overlaps; read = whole_items reads every stored piece an overlap touches whole
// into scratch memory and narrows it by copies (DCP's file reader), so bytes read exceed bytes
// needed by the amplification.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/plan/plan_items.hpp"
#include "harness/plan/shard_geometry.hpp"
#include "harness/spec/reshard_read.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// One stored piece of a tensor (a manifest entry).
struct StoredPiece {
  std::string file;  // relative to the checkpoint directory
  std::uint64_t file_offset = 0;
  ShardGeometry geometry;
  // torch.save's archive around the piece (strategy.framing): restore.read = "whole_items" reads
  // it with the piece, as DCP's reader reads each item's whole archive.
  std::uint64_t framing_before = 0;
  std::uint64_t framing_after = 0;
};

// Elements [needed, needed + elements) of a needed shard (from its flat_begin) are elements
// [stored, stored + elements) of a stored piece.
struct Overlap {
  std::int64_t needed = 0;
  std::int64_t stored = 0;
  std::int64_t elements = 0;
};

// The overlaps of a needed shard with a stored piece of the same tensor, in the needed shard's
// order. Global shapes may differ in the leading dimension only (vocabulary padding of another TP):
// the flat index of an element is the same in both.
std::vector<Overlap> intersect(const ShardGeometry& needed, const ShardGeometry& stored);

// A needed shard at its place in the rank's buffer.
struct NeededShard {
  std::string name;
  workloads::StateKind state = workloads::StateKind::weight;
  ShardGeometry geometry;
  std::uint64_t memory_offset = 0;
  // The identity target (a rank reads back what it wrote): the stored piece this shard is, read
  // whole by one request and no other piece of its tensor (a framework layout stores a
  // TP-replicated tensor on every TP rank: each reads its own copy). Its geometry need not shrink
  // exactly under model.scale. nullopt: every stored piece of the tensor that overlaps it.
  std::optional<StoredPiece> stored_as;
};

// Needed bytes beyond the stored tensor's leading dimension (another TP pads the vocabulary to
// another multiple): nothing to read; the reader writes them with the pattern before the timed
// read, as a framework pads them, so that verification covers the whole shard.
struct PaddingRun {
  std::uint64_t memory_offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t global_offset = 0;  // global byte of the tensor
  std::uint64_t key = 0;            // filled in by the caller (the tensor's data key)
  std::size_t shard = 0;            // index in `needed`
};

struct RankReadPlan {
  std::vector<std::string> files;   // relative paths, in first-use order
  std::vector<ByteRange> requests;  // coalesced, grouped by file in file-offset order
  std::vector<BufferCopy> copies;   // after every read: scratch bytes to shard bytes
                                    // (whole_items' narrowing, exact's scatter of strided rows)
  std::vector<PaddingRun> padding;
  std::uint64_t bytes_needed = 0;    // bytes of the needed shards that the checkpoint stores
  std::uint64_t bytes_read = 0;      // bytes the requests read
  std::uint64_t padding_bytes = 0;   // needed bytes beyond a stored tensor's leading dimension
  std::uint64_t scratch_offset = 0;  // where the scratch region starts in the buffer
  std::uint64_t buffer_bytes = 0;    // shards and scratch
};

// The stored pieces of a checkpoint, by (state, tensor name).
using StoredPieces =
    std::map<std::pair<workloads::StateKind, std::string>, std::vector<StoredPiece>>;

// How the exact reads are shaped (additive to plan_rank_reads; the defaults plan as before).
struct ReadShaping {
  // restore.gap_bytes: overlaps of one needed shard with one stored piece whose gap in the file is
  // at most this many bytes are one request into scratch, gaps included (read and dropped,
  // counted in bytes_read as amplification), scattered by copies: the strided half rows of a
  // row-parallel tensor become one read. 0: only overlaps that follow each other in the file.
  std::uint64_t gap_bytes = 0;
  // backend.direct: every request's file offset, length and memory offset a multiple of this;
  // a request that is not is read aligned outward into scratch and its bytes copied out (the
  // extra bytes count as read). 0: no alignment.
  std::uint64_t direct_alignment = 0;
  // Requests that continue each other in the file and in memory become one. false: one request
  // per overlap, as a same-layout restore reads one per stored shard (its extents then shaped
  // like the writer's, by strategy.coalesce_bytes and chunk_bytes).
  bool merge_adjacent = true;
  // The request of a stored_as shard ends on a multiple of this (backend.direct: the writer's
  // regions end on strategy.alignment, and a same-layout restore reads them so). 0 or 1: its bytes.
  std::uint64_t whole_piece_granule = 0;
};

// Plans the reads of `needed` (placed in a buffer of `shards_bytes`, scratch after it aligned to
// `alignment`). Throws std::runtime_error naming the tensor, the global element and the fix when
// a needed element is stored nowhere, a stored piece could not be shrunk exactly (model.scale),
// or the shapes differ beyond the leading dimension.
RankReadPlan plan_rank_reads(const std::vector<NeededShard>& needed, const StoredPieces& stored,
                             ReshardRead mode, std::uint64_t shards_bytes, std::uint64_t alignment,
                             const ReadShaping& shaping = {});

}  // namespace ckpt::harness
