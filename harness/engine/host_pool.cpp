#include "harness/engine/host_pool.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace ckpt::harness {

HostPool::HostPool(const Buffer& state, std::uint64_t capacity)
    : state_(state), capacity_(capacity == 0 ? state.size() : capacity) {
  if (capacity_ < state.size()) {
    ring_ = std::make_unique<ChunkRing>(state, capacity_);
    return;
  }
  // The snapshot never needs more than the state's size; the rest of the bound stays unallocated.
  if (state.view().kind == backends::MemoryKind::device) {
    copier_ = state.copier(state.size(), 1);
  } else {
    host_ = HostBuffer(state.size());
  }
}

std::uint64_t HostPool::allocation(std::uint64_t capacity, std::uint64_t state_bytes) {
  if (capacity == 0 || capacity >= state_bytes) return state_bytes;
  return capacity < kMinRingBytes ? 0 : ring_geometry(capacity).bytes();
}

std::uint64_t HostPool::high_water() const {
  return ring_ ? ring_->high_water() : high_water_;
}

backends::MemoryView HostPool::view() const {
  if (ring_) throw std::logic_error("HostPool::view: a ring has no whole snapshot");
  if (copier_) return copier_->slot(0);
  return host_.view();
}

void HostPool::hold() {
  if (ring_) {
    ring_->reset();
    return;
  }
  in_use_ = state_.size();
  high_water_ = std::max(high_water_, in_use_);
}

void HostPool::copy_in(std::uint64_t offset, std::uint64_t bytes) const {
  if (bytes == 0) return;
  if (ring_) throw std::logic_error("HostPool::copy_in: a ring is filled chunk by chunk");
  if (copier_) {
    if (offset != 0 || bytes != state_.size())
      throw std::logic_error("HostPool: device state copies whole buffers");
    copier_->start(0, 0, bytes, true);
    copier_->wait(0);
    return;
  }
  std::memcpy(host_.data() + offset, state_.view().data + offset, bytes);
}

}  // namespace ckpt::harness
