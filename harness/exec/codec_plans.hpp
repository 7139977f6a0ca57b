#pragma once

// strategy.compression executed on a process's buffers: its shards compressed into the frames a
// stored plan (stored_plan) writes, and a stored plan's frames, once read, decoded back into
// the logical plans' buffer. Host memory only (the campaign refuses other memory spaces).

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// What one compression or decompression of a process's plans did.
struct CodecWork {
  double seconds = 0;      // wall time on this process
  double cpu_seconds = 0;  // CPU time of its codec threads, summed
  int threads = 1;
  std::uint64_t raw_bytes = 0;     // the logical bytes
  std::uint64_t stored_bytes = 0;  // the frames' bytes
};

// The stored plans of `plans` with room for each shard's frames at the codec's bound: what the
// stored buffer must hold before compression.
std::vector<RankPlan> bounded_stored_plans(const std::vector<RankPlan>& plans, const Case& c);

// Compresses every shard of `plans` (in `raw`) into `stored_buffer` (a ProcessBuffer of
// bounded_stored_plans) with strategy.compression_threads threads, then makes `stored` the plans
// that write those frames (settled file offsets, IoPlans rebuilt).
CodecWork compress_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& raw,
                         const Case& c, std::vector<RankPlan>& stored,
                         const ProcessBuffer& stored_buffer);

// compress_plans of plans whose bytes lie in `data` at the offsets of `layout` (plan p's from
// data + layout.offset(p)): a copy of that buffer, as the engines' host pool mirrors the state.
CodecWork compress_plans(const std::vector<RankPlan>& plans, const ProcessBuffer& layout,
                         const std::byte* data, const Case& c, std::vector<RankPlan>& stored,
                         const ProcessBuffer& stored_buffer);

// One stored piece's frames and the place they decode to (exactly the piece's logical bytes).
struct FramedPiece {
  std::span<const std::byte> frames;
  std::span<std::byte> out;
};

// Decodes every piece on up to `threads` threads into `work` (raw and stored bytes summed);
// returns per piece "" or what is wrong with its frames (damaged, too short, too many bytes).
std::vector<std::string> decode_pieces(const std::vector<FramedPiece>& pieces, int threads,
                                       CodecWork& work);

// Decodes the frames of every shard of `stored` (read into `stored_buffer`) into the shard's
// logical place in `raw`, checking each frame and that the frames hold exactly the shard's bytes.
// Returns the first problem, naming the file, its byte offset and the tensor ("" when none).
std::string decode_plans(const std::vector<RankPlan>& stored, const ProcessBuffer& stored_buffer,
                         const ProcessBuffer& raw, int threads, CodecWork& work);

// The stored plans of reading the logical `plans` (the writer's ranks, as the case writes them)
// from a compressed checkpoint: each shard's frames where `manifest` records them. Throws
// std::runtime_error naming the tensor when the manifest lists no such piece, records no
// stored_bytes for it, or its file offset is not where the pieces before it end.
std::vector<RankPlan> manifest_stored_plans(const Manifest& manifest,
                                            const std::vector<RankPlan>& plans, const Case& c);

}  // namespace ckpt::harness
