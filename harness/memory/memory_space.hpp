#pragma once

// Where a process keeps its checkpoint data: host, pinned, CUDA device or Kokkos memory
// (campaign key memory.space). Each space fills and verifies in its own memory — device
// kernels for cuda, Kokkos kernels for kokkos — with the words of pattern::pattern_word.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "harness/memory/data_pattern_kind.hpp"

namespace ckpt::harness {

enum class MemorySpaceKind { host, pinned, cuda, kokkos };

// "host", "pinned", "cuda", "kokkos": the values of memory.space.
std::string_view memory_space_name(MemorySpaceKind kind);
// The kind named `name`, or nullopt.
std::optional<MemorySpaceKind> parse_memory_space(std::string_view name);

// A run of a shard in a buffer: [offset, offset + bytes) holds the pattern of tensor `key` from
// the tensor's global byte `global_offset` on (fill_pattern).
struct PatternRange {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t key = 0;
  std::uint64_t global_offset = 0;
};

// Where verification found the first wrong byte: ranges[range], byte `offset` of that range.
struct Mismatch {
  std::size_t range = 0;
  std::uint64_t offset = 0;
  std::uint8_t found = 0;
};

// Asynchronous copies between a device buffer and `slots()` staging slots of pinned host memory,
// so that a slot's copy overlaps I/O on the others (harness/memory/staging). The copies run in
// the order they were started. Used by one thread.
class DeviceCopier {
 public:
  virtual ~DeviceCopier() = default;
  virtual int slots() const = 0;
  virtual std::uint64_t slot_bytes() const = 0;
  // The slot's host memory (kind pinned, slot_bytes() long, page-aligned).
  virtual backends::MemoryView slot(int index) const = 0;
  // Starts copying buffer bytes [offset, offset + bytes) into the start of slot `index`
  // (to_host), or the start of the slot into those buffer bytes (!to_host). The slot's previous
  // copy must have been waited for. Throws std::runtime_error with the CUDA error.
  virtual void start(int index, std::uint64_t offset, std::uint64_t bytes, bool to_host) = 0;
  // Waits for the slot's copy; returns the seconds the copy itself took (0 when none is pending).
  virtual double wait(int index) = 0;
};

// Memory of one space, owned (RAII, move-only through unique_ptr), zeroed (pre-touched) on
// allocation. Used by one thread at a time.
class Buffer {
 public:
  virtual ~Buffer() = default;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // What backends are handed: kind device for memory the host cannot address.
  virtual backends::MemoryView view() const = 0;
  std::uint64_t size() const { return view().size; }
  virtual void zero() = 0;
  // Writes each range's pattern, in this buffer's space.
  virtual void fill(std::span<const PatternRange> ranges, DataPattern pattern) = 0;
  // The first range (in order) holding a wrong byte, and that byte's offset in the range.
  virtual std::optional<Mismatch> first_mismatch(std::span<const PatternRange> ranges,
                                                 DataPattern pattern) const = 0;
  // checksum64 (XXH3_64) of each range: the manifest's checksums.
  virtual std::vector<std::uint64_t> checksums(std::span<const PatternRange> ranges) const = 0;
  // Plain copies to and from host memory (tests, error reports).
  virtual void copy_to_host(std::uint64_t offset, std::span<std::byte> out) const = 0;
  virtual void copy_from_host(std::uint64_t offset, std::span<const std::byte> in) = 0;
  // Staging for backends that cannot address this buffer: `slots` slots of `slot_bytes`.
  // nullptr for memory the host addresses (view().kind != device).
  virtual std::unique_ptr<DeviceCopier> copier(std::uint64_t slot_bytes, int slots) const;
};

// A memory space: allocates buffers and says what it fell back from.
class MemorySpace {
 public:
  virtual ~MemorySpace() = default;
  MemorySpace() = default;
  MemorySpace(const MemorySpace&) = delete;
  MemorySpace& operator=(const MemorySpace&) = delete;

  virtual MemorySpaceKind kind() const = 0;
  // A zeroed buffer of `bytes`. Throws std::runtime_error naming the size and the space.
  virtual std::unique_ptr<Buffer> allocate(std::uint64_t bytes) = 0;
  // Conditions the results should record, one line each (e.g. pinned memory from mlock).
  virtual std::vector<std::string> notes() const { return {}; }
};

// Checks that every range lies inside a buffer of `size` bytes; throws std::out_of_range.
void check_ranges(std::span<const PatternRange> ranges, std::uint64_t size);

}  // namespace ckpt::harness
