#include "harness/load/chunk_packing.hpp"

#include <algorithm>

namespace ckpt::harness {
namespace {

std::uint64_t block_below(std::uint64_t v) {
  return v / kLoadBlock * kLoadBlock;
}
std::uint64_t block_above(std::uint64_t v) {
  return (v + kLoadBlock - 1) / kLoadBlock * kLoadBlock;
}

// Fills one chunk after another; `open_` says whether the last chunk of plan_ still takes ranges.
class Packer {
 public:
  Packer(std::uint64_t slot, bool direct)
      : slot_(slot), stride_(slot_stride(slot, direct)), direct_(direct) {}

  void add(const ByteRange& range) {
    if (open_ && plan_.chunks.back().file != range.file) open_ = false;
    for (std::uint64_t at = 0; at < range.length;) {
      if (!open_) open(range.file);
      const std::uint64_t n = fit(range.file_offset + at, range.length - at);
      if (n == 0) {
        open_ = false;
        continue;
      }
      place(range.memory_offset + at, range.file_offset + at, n);
      at += n;
    }
  }
  ChunkPlan take() { return std::move(plan_); }

 private:
  void open(std::size_t file) {
    plan_.chunks.push_back(
        {.file = file, .first_read = plan_.reads.size(), .first_copy = plan_.copies.size()});
    open_ = true;
    payload_ = 0;
    used_ = 0;
  }
  // The chunk's last read, when file bytes from `at` on can extend it: they start inside it or
  // right after it (under O_DIRECT: in its last block or the block after).
  ChunkRead* joinable(std::uint64_t at) {
    PackedChunk& c = plan_.chunks.back();
    if (c.read_count == 0) return nullptr;
    ChunkRead& last = plan_.reads.back();
    const std::uint64_t end = last.file_offset + (direct_ ? last.length : last.needed);
    const bool joins = at >= last.file_offset && (direct_ ? block_below(at) : at) <= end;
    return joins ? &last : nullptr;
  }
  // How many of the `remaining` bytes from file offset `at` this chunk takes (0: none, start the
  // next). Under O_DIRECT a range cut short ends at a block boundary.
  std::uint64_t fit(std::uint64_t at, std::uint64_t remaining) {
    const ChunkRead* last = joinable(at);
    const std::uint64_t read_start = last ? last->file_offset : (direct_ ? block_below(at) : at);
    const std::uint64_t room = stride_ - (last ? last->slot_offset : used_);
    if (read_start + room <= at) return 0;
    std::uint64_t n = std::min({remaining, slot_ - payload_, read_start + room - at});
    if (direct_ && n < remaining) n = block_below(at + n) > at ? block_below(at + n) - at : 0;
    return n;
  }
  // `n` bytes from file offset `at` to destination offset `to`.
  void place(std::uint64_t to, std::uint64_t at, std::uint64_t n) {
    PackedChunk& c = plan_.chunks.back();
    ChunkRead* read = joinable(at);
    if (read == nullptr) {
      plan_.reads.push_back({.file_offset = direct_ ? block_below(at) : at, .slot_offset = used_});
      ++c.read_count;
      read = &plan_.reads.back();
    }
    read->needed = std::max(read->needed, at + n - read->file_offset);
    read->length = direct_ ? block_above(read->needed) : read->needed;
    used_ = read->slot_offset + read->length;
    payload_ += n;
    plan_.copies.push_back(
        {.from = read->slot_offset + (at - read->file_offset), .to = to, .length = n});
    ++c.copy_count;
  }

  std::uint64_t slot_;
  std::uint64_t stride_;
  bool direct_;
  ChunkPlan plan_;
  bool open_ = false;
  std::uint64_t payload_ = 0;  // bytes of ranges in the open chunk
  std::uint64_t used_ = 0;     // bytes of its slot its reads fill
};

}  // namespace

std::uint64_t slot_stride(std::uint64_t slot, bool direct) {
  return direct ? slot + kLoadBlock : slot;
}

ChunkPlan pack_chunks(const FileRanges& ranges, std::uint64_t slot, bool direct) {
  Packer packer(slot, direct);
  for (const ByteRange& range : ranges.ranges) packer.add(range);
  return packer.take();
}

}  // namespace ckpt::harness
