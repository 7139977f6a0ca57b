#include "harness/exec/process_buffer.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string>

namespace ckpt::harness {
namespace {

std::uint64_t aligned(std::uint64_t bytes) {
  const std::uint64_t a = HostBuffer::kAlignment;
  return (bytes + a - 1) / a * a;
}

}  // namespace

std::uint64_t ProcessBuffer::bytes_for(const std::vector<RankPlan>& plans) {
  std::uint64_t total = 0;
  for (const RankPlan& p : plans) total += aligned(p.buffer_bytes);
  return total;
}

ProcessBuffer::ProcessBuffer(const std::vector<RankPlan>& plans, MemorySpace& space)
    : memory_(space.allocate(bytes_for(plans))) {
  std::uint64_t next = 0;
  for (const RankPlan& p : plans) {
    offsets_.push_back(next);
    sizes_.push_back(p.buffer_bytes);
    next += aligned(p.buffer_bytes);
  }
}

ProcessBuffer ProcessBuffer::reused(const std::vector<RankPlan>& plans, MemorySpace& space,
                                    std::uint64_t reuse_bytes, DataPattern pattern) {
  ProcessBuffer buffer;
  buffer.memory_ = space.allocate(reuse_bytes);
  buffer.offsets_.assign(plans.size(), 0);
  buffer.sizes_.assign(plans.size(), reuse_bytes);
  // Data the files receive (not the checkpoint's): touched before any clock, as fio fills its
  // buffer.
  const std::array<PatternRange, 1> whole{
      PatternRange{.offset = 0, .bytes = reuse_bytes, .key = 0, .global_offset = 0}};
  buffer.memory_->fill(whole, pattern);
  return buffer;
}

std::string reuse_buffer(std::vector<RankPlan>& plans, std::uint64_t reuse_bytes) {
  for (RankPlan& plan : plans) {
    for (backends::FilePlan& file : plan.io.files) {
      for (backends::Extent& e : file.extents) {
        if (e.length > reuse_bytes) {
          return "memory.reuse_bytes = " + std::to_string(reuse_bytes) +
                 " is smaller than a request of " + std::to_string(e.length) + " bytes (" +
                 file.path + "): set it to at least the largest request " +
                 "(strategy.chunk_bytes when set)";
        }
        const std::uint64_t at = e.memory_offset % reuse_bytes;
        e.memory_offset = at + e.length <= reuse_bytes ? at : 0;
      }
    }
  }
  return "";
}

void ProcessBuffer::prepare_staging(const StagingSettings& settings, bool whole) {
  stager_ = std::make_unique<Stager>(make_stager(*memory_, settings, whole));
}

backends::MemoryView ProcessBuffer::rank_view(std::size_t i) const {
  backends::MemoryView view = memory_->view();
  view.data += offsets_[i];
  view.size = sizes_[i];
  return view;
}

backends::IoPlan process_plan(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer) {
  backends::IoPlan merged;
  std::map<std::string, std::size_t> index;
  for (std::size_t r = 0; r < plans.size(); ++r) {
    const std::uint64_t base = buffer.offset(r);
    if (merged.attributes.empty()) merged.attributes = plans[r].io.attributes;
    for (const backends::FilePlan& file : plans[r].io.files) {
      const auto [it, inserted] = index.try_emplace(file.path, merged.files.size());
      if (inserted) {
        backends::FilePlan& fresh = merged.files.emplace_back();
        fresh.path = file.path;
        fresh.shared = file.shared;
        fresh.reserve_offset = file.reserve_offset;
      }
      backends::FilePlan& into = merged.files[it->second];
      into.shared = into.shared || file.shared;
      into.reserve_offset = std::min(into.reserve_offset, file.reserve_offset);
      into.file_size = std::max(into.file_size, file.file_size);
      for (backends::Extent e : file.extents) {
        e.memory_offset += base;
        into.extents.push_back(e);
      }
      for (backends::DatasetPiece piece : file.datasets) {
        piece.memory_offset += base;
        into.datasets.push_back(std::move(piece));
      }
    }
  }
  return merged;
}

backends::IoPlan process_plan_in_file_order(const std::vector<RankPlan>& plans,
                                            const ProcessBuffer& buffer) {
  backends::IoPlan merged = process_plan(plans, buffer);
  for (backends::FilePlan& file : merged.files) {
    std::stable_sort(file.extents.begin(), file.extents.end(),
                     [](const backends::Extent& a, const backends::Extent& b) {
                       return a.file_offset < b.file_offset;
                     });
  }
  return merged;
}

}  // namespace ckpt::harness
