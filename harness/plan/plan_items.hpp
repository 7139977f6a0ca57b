#pragma once

// The items every plan is made of, whichever phase runs it: byte ranges between files and a
// buffer, and copies inside memory. The save planner's extents, the load planner's reads and the
// loader's ranges are byte ranges; the load planner's narrowing and scatter and the pipelined
// loader's moves out of its chunk slots are copies. A backend sees a byte range as a
// backends::Extent of the FilePlan of its file (ByteRange::extent).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::harness {

// `length` bytes at `file_offset` of file `file` (an index into the plan's list of files) <->
// bytes [memory_offset, memory_offset + length) of the plan's buffer.
struct ByteRange {
  std::size_t file = 0;
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  std::uint64_t length = 0;

  backends::Extent extent() const { return {file_offset, memory_offset, length}; }
};

// `length` bytes from offset `from` of the source memory to offset `to` of the destination: the
// same buffer for a read plan's copies out of its scratch region; a chunk slot and the load's
// destination for the pipelined loader.
struct BufferCopy {
  std::uint64_t from = 0;
  std::uint64_t to = 0;
  std::uint64_t length = 0;
};

// Byte ranges of a list of files, in the order they are read.
struct FileRanges {
  std::vector<std::string> files;  // each path once
  std::vector<ByteRange> ranges;   // ByteRange::file indexes `files`

  std::uint64_t bytes() const {
    std::uint64_t sum = 0;
    for (const ByteRange& r : ranges) sum += r.length;
    return sum;
  }
};

}  // namespace ckpt::harness
