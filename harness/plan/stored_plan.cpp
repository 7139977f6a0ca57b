#include "harness/plan/stored_plan.hpp"

#include <stdexcept>

#include "harness/common/align.hpp"
#include "harness/plan/extent_builder.hpp"

namespace ckpt::harness {
namespace {

// Each file's frames start on a cache line of the stored buffer.
constexpr std::uint64_t kFileAlignment = 64;

bool starts_file(const RankPlan& plan, std::size_t i) {
  return i == 0 || plan.shards[i].file != plan.shards[i - 1].file;
}

void check_sizes(const RankPlan& plan, const std::vector<std::uint64_t>& sizes) {
  if (sizes.size() != plan.shards.size())
    throw std::logic_error("stored plan: one size per shard is needed");
}

}  // namespace

RankPlan stored_plan(const RankPlan& logical, const std::vector<std::uint64_t>& sizes) {
  check_sizes(logical, sizes);
  RankPlan stored = logical;
  stored.buffer_bytes = 0;
  std::uint64_t base = 0;
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < stored.shards.size(); ++i) {
    PlacedShard& s = stored.shards[i];
    if (starts_file(stored, i)) {
      base = align_up(stored.buffer_bytes, kFileAlignment);
      pos = 0;
    }
    s.file_offset = pos;
    s.stored_offset = base + pos;
    s.stored_bytes = sizes[i];
    pos += sizes[i];
    stored.buffer_bytes = base + pos;
  }
  return stored;
}

void settle_stored(RankPlan& stored, const std::vector<std::uint64_t>& sizes) {
  check_sizes(stored, sizes);
  std::uint64_t base = 0;
  std::uint64_t pos = 0;
  for (std::size_t i = 0; i < stored.shards.size(); ++i) {
    PlacedShard& s = stored.shards[i];
    if (starts_file(stored, i)) {
      base = s.stored_offset - s.file_offset;
      pos = 0;
    }
    s.file_offset = pos;
    s.stored_offset = base + pos;
    s.stored_bytes = sizes[i];
    pos += sizes[i];
  }
}

void build_stored_io(RankPlan& stored, const Case& c) {
  std::vector<backends::FilePlan> files;
  std::vector<backends::Extent> extents;
  for (std::size_t i = 0; i < stored.shards.size(); ++i) {
    const PlacedShard& s = stored.shards[i];
    if (starts_file(stored, i)) {
      if (files.size() >= stored.io.files.size())
        throw std::logic_error("stored plan: more files in its shards than in its IoPlan");
      backends::FilePlan& file = files.emplace_back();
      file.path = stored.io.files[files.size() - 1].path;
      extents.clear();
    }
    extents.push_back({s.file_offset, s.stored_offset, s.stored_bytes});
    backends::FilePlan& file = files.back();
    file.file_size = s.file_offset + s.stored_bytes;
    const bool last = i + 1 == stored.shards.size() || starts_file(stored, i + 1);
    if (last) file.extents = build_extents(extents, c.coalesce_bytes, c.chunk_bytes, 1);
  }
  stored.io.files = std::move(files);
}

}  // namespace ckpt::harness
