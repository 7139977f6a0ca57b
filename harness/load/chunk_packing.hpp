#pragma once

// How the pipelined loader cuts its ranges into chunks (load_pipelined): each chunk is one slot of
// the pool, one hand-off from a reader thread to the copier. Consecutive ranges of one file share a
// chunk while they fit; ranges adjacent in the file (under O_DIRECT: whose 4096-byte blocks touch
// or overlap) are one pread of their span, the others in the chunk each their own pread into the
// same slot; a range larger than what is left of a chunk continues in the next (at a block boundary
// under O_DIRECT, so no block is read twice).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/load/weight_loader.hpp"

namespace ckpt::harness {

inline constexpr std::uint64_t kLoadBlock =
    4096;  // O_DIRECT's alignment of offsets, lengths and memory

// One pread of a chunk: file bytes [file_offset, file_offset + length) into its slot at
// slot_offset. At least `needed` bytes must come back; the rest, under O_DIRECT, is the tail of the
// last block, short at the end of the file.
struct ChunkRead {
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
  std::uint64_t needed = 0;
  std::uint64_t slot_offset = 0;
};

// A chunk: its reads and copies, [first_read, first_read + read_count) of ChunkPlan::reads and the
// same for copies. Every range in it is of file `file`.
struct PackedChunk {
  std::size_t file = 0;
  std::size_t first_read = 0;
  std::size_t read_count = 0;
  std::size_t first_copy = 0;
  std::size_t copy_count = 0;
};

struct ChunkPlan {
  std::vector<PackedChunk> chunks;
  std::vector<ChunkRead> reads;
  // Each from its slot (BufferCopy::from: an offset in the slot) to its place in the destination.
  std::vector<BufferCopy> copies;
};

// Bytes between slots: a chunk's `slot` bytes of ranges, and under O_DIRECT one block more (its
// reads start at the block below their first byte).
std::uint64_t slot_stride(std::uint64_t slot, bool direct);

// The chunks of `ranges` (in their order; empty ranges read nothing) for slots of `slot` bytes (a
// positive multiple of 4096): each chunk holds at most `slot` bytes of ranges and its reads fill at
// most slot_stride(slot, direct) bytes of its slot.
ChunkPlan pack_chunks(const FileRanges& ranges, std::uint64_t slot, bool direct);

}  // namespace ckpt::harness
