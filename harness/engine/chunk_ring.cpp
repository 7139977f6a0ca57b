#include "harness/engine/chunk_ring.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

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

namespace {

RingGeometry checked_geometry(std::uint64_t capacity) {
  if (capacity < kMinRingBytes) {
    throw std::invalid_argument(
        fmt::format("engine.host_pool_bytes = {}: a pool smaller than one process's "
                    "checkpoint is a ring of chunks and needs at least {} bytes",
                    capacity, kMinRingBytes));
  }
  return ring_geometry(capacity);
}

}  // namespace

ChunkRing::ChunkRing(const Buffer& state, std::uint64_t capacity)
    : state_(state), geometry_(checked_geometry(capacity)), slots_(geometry_.slots) {
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
  return slots_.high_water();
}

double ChunkRing::copy_wait_seconds() const {
  return slots_.acquire_wait_seconds();
}

bool ChunkRing::push(std::uint64_t offset, std::uint64_t bytes) {
  if (bytes > geometry_.chunk_bytes)
    throw std::logic_error("ChunkRing::push: more bytes than a chunk holds");
  const std::optional<int> slot = slots_.acquire(bytes);
  if (!slot) return false;
  // The flush side writes older chunks meanwhile; this slot is not theirs until fill().
  if (copier_) {
    copier_->start(*slot, offset, bytes, true);
    copier_->wait(*slot);
  } else {
    std::memcpy(chunk(*slot).data, state_.view().data + offset, bytes);
  }
  slots_.fill(*slot, bytes);
  return true;
}

std::optional<backends::MemoryView> ChunkRing::front() {
  if (!front_) front_ = slots_.take();
  if (!front_) return std::nullopt;
  backends::MemoryView view = chunk(front_->slot);
  view.size = front_->payload;
  return view;
}

void ChunkRing::pop() {
  if (!front_) throw std::logic_error("ChunkRing::pop: no chunk taken by front()");
  slots_.release(front_->slot);
  front_.reset();
}

void ChunkRing::close() {
  slots_.close();
}

void ChunkRing::reset() {
  slots_.reset();
  front_.reset();
}

}  // namespace ckpt::harness
