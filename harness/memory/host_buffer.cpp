#include "harness/memory/host_buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

namespace ckpt::harness {

void HostBuffer::Free::operator()(std::byte* p) const noexcept {
  std::free(p);
}

HostBuffer::HostBuffer(std::uint64_t bytes) : size_(bytes) {
  const std::uint64_t rounded =
      (std::max<std::uint64_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) {
    throw std::runtime_error("cannot allocate a " + std::to_string(bytes) +
                             "-byte buffer; lower model.scale or select fewer ranks");
  }
  data_.reset(static_cast<std::byte*>(p));
  zero();  // pre-touch every page
}

void HostBuffer::zero() {
  if (size_ > 0) std::memset(data_.get(), 0, size_);
}

}  // namespace ckpt::harness
