#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/memory/staging.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// One allocation for all the modeled ranks a process writes or reads, in the case's memory space:
// rank plan i's buffer starts at offset(i), aligned for direct I/O. One allocation lets a
// collective backend move a whole process's share in one call (process_plan), and a memory space
// allocate once. Device memory (memory.space = "cuda") goes to backends that cannot address it
// through the Stager (make_stager).
class ProcessBuffer {
 public:
  ProcessBuffer() = default;
  ProcessBuffer(const std::vector<RankPlan>& plans, MemorySpace& space);

  // memory.reuse_bytes: one buffer of `reuse_bytes` for all the ranks (offset 0 each), filled
  // once with `pattern`; the plans' requests must already point into it (reuse_buffer).
  static ProcessBuffer reused(const std::vector<RankPlan>& plans, MemorySpace& space,
                              std::uint64_t reuse_bytes, DataPattern pattern);

  // Bytes a ProcessBuffer of `plans` allocates.
  static std::uint64_t bytes_for(const std::vector<RankPlan>& plans);

  std::size_t ranks() const { return offsets_.size(); }
  std::uint64_t offset(std::size_t i) const { return offsets_[i]; }
  backends::MemoryView rank_view(std::size_t i) const;
  backends::MemoryView view() const { return memory_ ? memory_->view() : backends::MemoryView{}; }
  Buffer& memory() const { return *memory_; }
  void zero() {
    if (memory_) memory_->zero();
  }

  // Device memory a backend cannot address: makes the pinned staging slots now (before any
  // clock starts); `whole` for collective backends (one slot of the whole buffer).
  void prepare_staging(const StagingSettings& settings, bool whole);
  // The stager when prepare_staging was called, else nullptr.
  Stager* stager() const { return stager_.get(); }

 private:
  std::unique_ptr<Buffer> memory_;
  std::unique_ptr<Stager> stager_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::uint64_t> sizes_;
};

// memory.reuse_bytes: points every request of `plans` into one buffer of `reuse_bytes`, as fio
// and IOR reuse theirs: at its own memory offset modulo `reuse_bytes` when it fits there, else at
// 0 (both keep direct-I/O alignment when `reuse_bytes` is a multiple of it). Returns the problem
// ("" when none): a request longer than the buffer. Dataset pieces (hdf5) keep their offsets.
std::string reuse_buffer(std::vector<RankPlan>& plans, std::uint64_t reuse_bytes);

// Every rank plan of a process as one IoPlan over its ProcessBuffer: memory offsets shifted by
// each rank's offset, and a file several of the ranks touch merged into one FilePlan (extents
// and dataset pieces in rank order), for backends that take one call per process.
backends::IoPlan process_plan(const std::vector<RankPlan>& plans, const ProcessBuffer& buffer);

// process_plan with each file's extents in file-offset order (stable: equal offsets keep rank
// order), files in the order the ranks first use them.
backends::IoPlan process_plan_in_file_order(const std::vector<RankPlan>& plans,
                                            const ProcessBuffer& buffer);

}  // namespace ckpt::harness
