#include "harness/engine/host_pool.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>

namespace ckpt::harness {

HostPool::HostPool(const Buffer& state, std::uint64_t capacity)
    : state_(state), capacity_(capacity == 0 ? state.size() : capacity) {
  if (capacity_ < state.size()) {
    throw std::invalid_argument(fmt::format("engine.host_pool_bytes = {} is less than one process's checkpoint ({} "
                                            "bytes, memory.space and the model's share); chunked flushing is not "
                                            "implemented: raise engine.host_pool_bytes or use engine.name = \"sync\"",
                                            capacity_, state.size()));
  }
  // The snapshot never needs more than the state's size; the rest of the bound stays unallocated.
  if (state.view().kind == backends::MemoryKind::device) {
    copier_ = state.copier(state.size(), 1);
  } else {
    host_ = HostBuffer(state.size());
  }
}

backends::MemoryView HostPool::view() const {
  if (copier_) return copier_->slot(0);
  return host_.view();
}

void HostPool::hold() {
  in_use_ = state_.size();
  high_water_ = std::max(high_water_, in_use_);
}

void HostPool::copy_in(std::uint64_t offset, std::uint64_t bytes) const {
  if (bytes == 0) return;
  if (copier_) {
    if (offset != 0 || bytes != state_.size()) throw std::logic_error("HostPool: device state copies whole buffers");
    copier_->start(0, 0, bytes, true);
    copier_->wait(0);
    return;
  }
  std::memcpy(host_.data() + offset, state_.view().data + offset, bytes);
}

}  // namespace ckpt::harness
