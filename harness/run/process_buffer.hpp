#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// One allocation for all the modeled ranks a process writes or reads: rank plan i's buffer
// starts at offset(i), aligned for direct I/O. One allocation lets a collective backend move a
// whole process's share in one call (process_plan), and a memory space allocate once.
class ProcessBuffer {
 public:
  ProcessBuffer() = default;
  explicit ProcessBuffer(const std::vector<RankPlan>& plans);

  // Bytes a ProcessBuffer of `plans` allocates.
  static std::uint64_t bytes_for(const std::vector<RankPlan>& plans);

  std::size_t ranks() const { return offsets_.size(); }
  std::uint64_t offset(std::size_t i) const { return offsets_[i]; }
  std::byte* rank_data(std::size_t i) const { return memory_.data() + offsets_[i]; }
  backends::MemoryView rank_view(std::size_t i) const;
  backends::MemoryView view() const { return memory_.view(); }
  void zero() { memory_.zero(); }

 private:
  HostBuffer memory_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::uint64_t> sizes_;
};

// Every rank plan of a process as one IoPlan over its ProcessBuffer: memory offsets shifted by
// each rank's offset, and a file several of the ranks touch merged into one FilePlan (extents
// and dataset pieces in rank order), for backends that take one call per process.
backends::IoPlan process_plan(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer);

}  // namespace ckpt::harness
