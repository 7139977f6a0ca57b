#include "backends/s3/s3_extents.hpp"

#include <algorithm>

namespace ckpt::backends::s3 {
namespace {

std::vector<Extent> by_file_offset(const FilePlan& file) {
  std::vector<Extent> extents;
  for (const Extent& e : file.extents) {
    if (e.length > 0) extents.push_back(e);
  }
  std::sort(extents.begin(), extents.end(),
            [](const Extent& a, const Extent& b) { return a.file_offset < b.file_offset; });
  return extents;
}

// Appends object bytes [first, first + length) of one run of adjacent extents as pieces.
void add_pieces(RangeRead& read, const std::vector<Extent>& run, MemoryView memory) {
  const std::uint64_t end = read.first + read.length;
  for (const Extent& e : run) {
    const std::uint64_t begin = std::max(e.file_offset, read.first);
    const std::uint64_t stop = std::min(e.file_offset + e.length, end);
    if (begin >= stop) continue;
    read.pieces.push_back(
        Piece{memory.data + e.memory_offset + (begin - e.file_offset), stop - begin});
  }
}

}  // namespace

std::uint64_t object_size(const FilePlan& file) {
  std::uint64_t size = file.file_size;
  for (const Extent& e : file.extents) size = std::max(size, e.file_offset + e.length);
  return size;
}

std::vector<Segment> object_segments(const FilePlan& file, MemoryView memory, std::uint64_t size) {
  std::vector<Segment> segments;
  std::uint64_t at = 0;
  for (const Extent& e : by_file_offset(file)) {
    if (e.file_offset > at) segments.push_back(Segment{nullptr, e.file_offset - at});
    segments.push_back(Segment{memory.data + e.memory_offset, e.length});
    at = e.file_offset + e.length;
  }
  if (size > at) segments.push_back(Segment{nullptr, size - at});
  return segments;
}

std::vector<Segment> slice(const std::vector<Segment>& segments, std::uint64_t begin,
                           std::uint64_t end) {
  std::vector<Segment> out;
  std::uint64_t at = 0;
  for (const Segment& s : segments) {
    const std::uint64_t from = std::max(begin, at);
    const std::uint64_t to = std::min(end, at + s.length);
    if (from < to) {
      out.push_back(Segment{s.data == nullptr ? nullptr : s.data + (from - at), to - from});
    }
    at += s.length;
    if (at >= end) break;
  }
  return out;
}

std::vector<RangeRead> range_reads(const FilePlan& file, MemoryView memory,
                                   std::uint64_t max_request) {
  const std::vector<Extent> extents = by_file_offset(file);
  std::vector<RangeRead> reads;
  for (std::size_t i = 0; i < extents.size();) {
    std::size_t j = i + 1;
    while (j < extents.size() &&
           extents[j].file_offset == extents[j - 1].file_offset + extents[j - 1].length) {
      ++j;
    }
    const std::vector<Extent> run(extents.begin() + static_cast<std::ptrdiff_t>(i),
                                  extents.begin() + static_cast<std::ptrdiff_t>(j));
    const std::uint64_t end = run.back().file_offset + run.back().length;
    for (std::uint64_t first = run.front().file_offset; first < end; first += max_request) {
      RangeRead read{first, std::min(max_request, end - first), {}};
      add_pieces(read, run, memory);
      reads.push_back(std::move(read));
    }
    i = j;
  }
  return reads;
}

}  // namespace ckpt::backends::s3
