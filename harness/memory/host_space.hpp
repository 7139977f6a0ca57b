#pragma once

// Memory the host addresses directly: the host space, pinned memory (page-locked), and the
// base that CUDA's pinned buffers and the Kokkos space reuse for copies and checksums.

#include <memory>
#include <string>

#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

// A buffer whose bytes the host reads and writes in place; fills and verifies on the host.
class HostAddressableBuffer : public Buffer {
 public:
  backends::MemoryView view() const override { return view_; }
  void zero() override;
  void fill(std::span<const PatternRange> ranges, DataPattern pattern) override;
  std::optional<Mismatch> first_mismatch(std::span<const PatternRange> ranges,
                                         DataPattern pattern) const override;
  std::vector<std::uint64_t> checksums(std::span<const PatternRange> ranges) const override;
  void copy_to_host(std::uint64_t offset, std::span<std::byte> out) const override;
  void copy_from_host(std::uint64_t offset, std::span<const std::byte> in) override;

 protected:
  explicit HostAddressableBuffer(backends::MemoryView view) : view_(view) {}
  void check_span(std::uint64_t offset, std::uint64_t bytes) const;

 private:
  backends::MemoryView view_;
};

// Page-aligned, pre-touched host memory (HostBuffer).
std::unique_ptr<MemorySpace> make_host_space();

// Pinned memory without CUDA: page-aligned host memory locked with mlock. `why` says why
// cudaMallocHost is not used (no CUDA in this build, no device); it heads the space's note.
// When mlock itself fails (RLIMIT_MEMLOCK), the memory stays unlocked and a note says so.
std::unique_ptr<MemorySpace> make_locked_host_space(std::string why);

}  // namespace ckpt::harness
