#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "backends/s3/s3_http.hpp"

namespace ckpt::backends::s3 {

// The size of the object a file of the plan becomes: its file_size or the end of its last
// extent, whichever is larger.
std::uint64_t object_size(const FilePlan& file);

// The bytes of that object in order: the extents' memory, sorted by file offset, with the gaps
// between them (and up to `size`) as zeros, as a file's holes read.
std::vector<Segment> object_segments(const FilePlan& file, MemoryView memory, std::uint64_t size);

// Bytes [begin, end) of an object given as `segments`.
std::vector<Segment> slice(const std::vector<Segment>& segments, std::uint64_t begin,
                           std::uint64_t end);

// One ranged GET: object bytes [first, first + length) into `pieces`.
struct RangeRead {
  std::uint64_t first = 0;
  std::uint64_t length = 0;
  std::vector<Piece> pieces;
};

// The ranged GETs that read a file's extents: extents adjacent in the object are coalesced into
// one range (their memory may lie anywhere), and ranges are cut at `max_request` bytes so that
// a large extent is read by several requests at once.
std::vector<RangeRead> range_reads(const FilePlan& file, MemoryView memory,
                                   std::uint64_t max_request);

}  // namespace ckpt::backends::s3
