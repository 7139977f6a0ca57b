#include "harness/engine/chunk_ring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{64} << 20;

}  // namespace

RingGeometry ring_geometry(std::uint64_t capacity) {
  const std::uint64_t align = HostBuffer::kAlignment;
  const std::uint64_t chunk =
      std::max(align, std::min(kMaxChunkBytes, capacity / 2 / align * align));
  return {static_cast<int>(std::max<std::uint64_t>(2, capacity / chunk)), chunk};
}

ChunkRing::ChunkRing(const Buffer& state, std::uint64_t capacity) : state_(state) {
  if (capacity < kMinRingBytes) {
    throw std::invalid_argument(
        fmt::format("engine.host_pool_bytes = {}: a pool smaller than one process's "
                    "checkpoint is a ring of chunks and needs at least {} bytes",
                    capacity, kMinRingBytes));
  }
  geometry_ = ring_geometry(capacity);
  held_.assign(static_cast<std::size_t>(geometry_.slots), 0);
  if (state.view().kind == backends::MemoryKind::device) {
    copier_ = state.copier(geometry_.chunk_bytes, geometry_.slots);
  } else {
    host_ = HostBuffer(geometry_.bytes());
  }
}

backends::MemoryView ChunkRing::chunk(int slot) const {
  if (copier_) return copier_->slot(slot);
  return {host_.data() + static_cast<std::uint64_t>(slot) * geometry_.chunk_bytes,
          geometry_.chunk_bytes, backends::MemoryKind::host};
}

std::uint64_t ChunkRing::high_water() const {
  const std::lock_guard lock(mutex_);
  return high_water_;
}

double ChunkRing::copy_wait_seconds() const {
  const std::lock_guard lock(mutex_);
  return copy_wait_seconds_;
}

bool ChunkRing::push(std::uint64_t offset, std::uint64_t bytes) {
  if (bytes > geometry_.chunk_bytes)
    throw std::logic_error("ChunkRing::push: more bytes than a chunk holds");
  const auto slots = static_cast<std::uint64_t>(geometry_.slots);
  int slot = 0;
  {
    std::unique_lock lock(mutex_);
    const auto start = Clock::now();
    changed_.wait(lock, [&] { return closed_ || pushed_ - popped_ < slots; });
    copy_wait_seconds_ += seconds_since(start);
    if (closed_) return false;
    slot = static_cast<int>(pushed_ % slots);
    held_[static_cast<std::size_t>(slot)] = bytes;
    in_use_ += bytes;
    high_water_ = std::max(high_water_, in_use_);
  }
  // Outside the lock: the flush side writes older chunks meanwhile; this slot is not theirs.
  if (copier_) {
    copier_->start(slot, offset, bytes, true);
    copier_->wait(slot);
  } else {
    std::memcpy(chunk(slot).data, state_.view().data + offset, bytes);
  }
  {
    const std::lock_guard lock(mutex_);
    ++pushed_;
  }
  changed_.notify_all();
  return true;
}

std::optional<backends::MemoryView> ChunkRing::front() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return closed_ || pushed_ > popped_; });
  if (closed_) return std::nullopt;
  const int slot = static_cast<int>(popped_ % static_cast<std::uint64_t>(geometry_.slots));
  backends::MemoryView view = chunk(slot);
  view.size = held_[static_cast<std::size_t>(slot)];
  return view;
}

void ChunkRing::pop() {
  {
    const std::lock_guard lock(mutex_);
    const auto slot =
        static_cast<std::size_t>(popped_ % static_cast<std::uint64_t>(geometry_.slots));
    in_use_ -= held_[slot];
    held_[slot] = 0;
    ++popped_;
  }
  changed_.notify_all();
}

void ChunkRing::close() {
  {
    const std::lock_guard lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

void ChunkRing::reset() {
  const std::lock_guard lock(mutex_);
  pushed_ = popped_ = in_use_ = 0;
  std::fill(held_.begin(), held_.end(), 0);
  copy_wait_seconds_ = 0;
  closed_ = false;
}

}  // namespace ckpt::harness
