#include "harness/memory/host_space.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "harness/memory/checksum.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/host_buffer.hpp"

namespace ckpt::harness {
namespace {

class HostSpaceBuffer final : public HostAddressableBuffer {
 public:
  explicit HostSpaceBuffer(HostBuffer memory)
      : HostAddressableBuffer(memory.view()), memory_(std::move(memory)) {}

 private:
  HostBuffer memory_;
};

class HostSpace final : public MemorySpace {
 public:
  MemorySpaceKind kind() const override { return MemorySpaceKind::host; }
  std::unique_ptr<Buffer> allocate(std::uint64_t bytes) override {
    return std::make_unique<HostSpaceBuffer>(HostBuffer(bytes));
  }
};

std::string memlock_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return "unknown";
  if (limit.rlim_cur == RLIM_INFINITY) return "unlimited";
  return std::to_string(limit.rlim_cur) + " bytes";
}

// Page-aligned memory, pre-touched, then locked; unlocked and freed on destruction.
class LockedBuffer final : public HostAddressableBuffer {
 public:
  LockedBuffer(std::byte* data, std::uint64_t bytes, bool locked)
      : HostAddressableBuffer({data, bytes, backends::MemoryKind::pinned}),
        data_(data),
        locked_(locked) {}
  ~LockedBuffer() override {
    if (locked_) ::munlock(data_, size());
    std::free(data_);
  }

 private:
  std::byte* data_;
  bool locked_;
};

class LockedHostSpace final : public MemorySpace {
 public:
  explicit LockedHostSpace(std::string why) : why_(std::move(why)) {}
  MemorySpaceKind kind() const override { return MemorySpaceKind::pinned; }
  std::vector<std::string> notes() const override { return notes_; }

  std::unique_ptr<Buffer> allocate(std::uint64_t bytes) override {
    const std::uint64_t a = HostBuffer::kAlignment;
    const std::uint64_t rounded = (std::max<std::uint64_t>(bytes, 1) + a - 1) / a * a;
    auto* data = static_cast<std::byte*>(std::aligned_alloc(a, rounded));
    if (data == nullptr) {
      throw std::runtime_error(
          fmt::format("memory.space = \"pinned\": cannot allocate {} bytes", bytes));
    }
    std::memset(data, 0, rounded);  // pre-touch every page
    const bool locked = ::mlock(data, rounded) == 0;
    add_note(
        fmt::format("memory.space = \"pinned\": {}; page-locked host memory from mlock instead of "
                    "cudaMallocHost",
                    why_));
    if (!locked) {
      add_note(fmt::format(
          "memory.space = \"pinned\": mlock of {} bytes failed ({}; RLIMIT_MEMLOCK {}): the memory "
          "is not page-locked",
          rounded, std::strerror(errno), memlock_limit()));
    }
    return std::make_unique<LockedBuffer>(data, bytes, locked);
  }

 private:
  void add_note(std::string note) {
    if (std::find(notes_.begin(), notes_.end(), note) == notes_.end())
      notes_.push_back(std::move(note));
  }

  std::string why_;
  std::vector<std::string> notes_;
};

}  // namespace

void HostAddressableBuffer::check_span(std::uint64_t offset, std::uint64_t bytes) const {
  if (offset > view_.size || bytes > view_.size - offset) {
    throw std::out_of_range(fmt::format("bytes [{}, {}) lie outside the {}-byte buffer", offset,
                                        offset + bytes, view_.size));
  }
}

void HostAddressableBuffer::zero() {
  if (view_.size > 0) std::memset(view_.data, 0, view_.size);
}

void HostAddressableBuffer::fill(std::span<const PatternRange> ranges, DataPattern pattern) {
  check_ranges(ranges, view_.size);
  for (const PatternRange& r : ranges)
    fill_pattern(view_.data + r.offset, r.bytes, pattern, r.key, r.global_offset);
}

std::optional<Mismatch> HostAddressableBuffer::first_mismatch(std::span<const PatternRange> ranges,
                                                              DataPattern pattern) const {
  check_ranges(ranges, view_.size);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const std::byte* data = view_.data + ranges[i].offset;
    if (const auto bad = harness::first_mismatch(data, ranges[i].bytes, pattern, ranges[i].key,
                                                 ranges[i].global_offset)) {
      return Mismatch{i, *bad, static_cast<std::uint8_t>(data[*bad])};
    }
  }
  return std::nullopt;
}

std::vector<std::uint64_t> HostAddressableBuffer::checksums(
    std::span<const PatternRange> ranges) const {
  check_ranges(ranges, view_.size);
  std::vector<std::uint64_t> out;
  out.reserve(ranges.size());
  for (const PatternRange& r : ranges) out.push_back(checksum64(view_.data + r.offset, r.bytes));
  return out;
}

void HostAddressableBuffer::copy_to_host(std::uint64_t offset, std::span<std::byte> out) const {
  check_span(offset, out.size());
  if (!out.empty()) std::memcpy(out.data(), view_.data + offset, out.size());
}

void HostAddressableBuffer::copy_from_host(std::uint64_t offset, std::span<const std::byte> in) {
  check_span(offset, in.size());
  if (!in.empty()) std::memcpy(view_.data + offset, in.data(), in.size());
}

std::unique_ptr<MemorySpace> make_host_space() {
  return std::make_unique<HostSpace>();
}

std::unique_ptr<MemorySpace> make_locked_host_space(std::string why) {
  return std::make_unique<LockedHostSpace>(std::move(why));
}

}  // namespace ckpt::harness
