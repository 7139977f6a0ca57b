#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "backends/backend.hpp"

namespace ckpt::harness {

// Page-aligned host memory, owned (RAII, move-only) and pre-touched on allocation so that
// first-touch page faults never land inside a timed phase.
class HostBuffer {
 public:
  static constexpr std::uint64_t kAlignment = 4096;

  HostBuffer() = default;
  explicit HostBuffer(std::uint64_t bytes);  // throws std::bad_alloc with the size in the message

  std::byte* data() const { return data_.get(); }
  std::uint64_t size() const { return size_; }
  backends::MemoryView view() const { return {data_.get(), size_, backends::MemoryKind::host}; }
  void zero();

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> data_;
  std::uint64_t size_ = 0;
};

}  // namespace ckpt::harness
