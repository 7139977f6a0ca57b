#include "harness/plan/extent_builder.hpp"

#include <algorithm>

namespace ckpt::harness {
namespace {

std::vector<backends::Extent> coalesce(const std::vector<backends::Extent>& in,
                                       std::uint64_t limit) {
  std::vector<backends::Extent> out;
  for (const backends::Extent& e : in) {
    if (!out.empty()) {
      backends::Extent& last = out.back();
      const std::uint64_t merged = e.file_offset + e.length - last.file_offset;
      const bool mirrors = e.memory_offset - last.memory_offset == e.file_offset - last.file_offset;
      if (e.file_offset >= last.file_offset + last.length && mirrors && merged <= limit) {
        last.length = merged;
        continue;
      }
    }
    out.push_back(e);
  }
  return out;
}

std::vector<backends::Extent> split(const std::vector<backends::Extent>& in, std::uint64_t chunk) {
  std::vector<backends::Extent> out;
  for (const backends::Extent& e : in) {
    for (std::uint64_t done = 0; done < e.length; done += chunk) {
      out.push_back(
          {e.file_offset + done, e.memory_offset + done, std::min(chunk, e.length - done)});
    }
  }
  return out;
}

}  // namespace

std::vector<backends::Extent> build_extents(std::vector<backends::Extent> shards,
                                            std::uint64_t coalesce_bytes, std::uint64_t chunk_bytes,
                                            std::uint64_t granule) {
  if (coalesce_bytes > 0) shards = coalesce(shards, coalesce_bytes);
  if (chunk_bytes > 0) {
    const std::uint64_t unit = std::max<std::uint64_t>(1, granule);
    shards = split(shards, std::max(unit, chunk_bytes / unit * unit));
  }
  return shards;
}

std::uint64_t PackedFiles::add(const std::string& file, std::uint64_t memory_offset,
                               std::uint64_t bytes) {
  const auto [it, added] = index_.try_emplace(file, files_.size());
  if (added) {
    files_.emplace_back().path = (dir_ / file).string();
    extents_.emplace_back();
  }
  backends::FilePlan& f = files_[it->second];
  const std::uint64_t offset = f.file_size;
  extents_[it->second].push_back({offset, memory_offset, bytes});
  f.file_size += bytes;
  return offset;
}

std::vector<backends::FilePlan> PackedFiles::files(std::uint64_t coalesce_bytes,
                                                   std::uint64_t chunk_bytes) const {
  std::vector<backends::FilePlan> out = files_;
  for (std::size_t f = 0; f < out.size(); ++f)
    out[f].extents = build_extents(extents_[f], coalesce_bytes, chunk_bytes, 1);
  return out;
}

}  // namespace ckpt::harness
