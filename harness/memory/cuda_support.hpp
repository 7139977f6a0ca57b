#pragma once

// Private to harness/memory's CUDA files: errors with context and RAII handles.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::harness::cuda {

// "error 2 cudaErrorMemoryAllocation: out of memory"
std::string describe(cudaError_t error);

// Throws std::runtime_error "<what>: <describe(error)>" unless error is cudaSuccess.
void check(cudaError_t error, std::string_view what);

// Move-only owners; the destructors release without throwing.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& other) noexcept : stream_(other.stream_) { other.stream_ = nullptr; }
  Stream& operator=(Stream&&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }
  Event& operator=(Event&&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// cudaMallocHost memory, zeroed (every page touched).
class PinnedMemory {
 public:
  explicit PinnedMemory(std::uint64_t bytes);
  ~PinnedMemory();
  PinnedMemory(PinnedMemory&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
  }
  PinnedMemory& operator=(PinnedMemory&&) = delete;
  std::byte* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace ckpt::harness::cuda

#include <memory>

#include "harness/memory/memory_space.hpp"

namespace ckpt::harness::cuda {

// Staging slots for device memory [device, device + size): `slots` cudaMallocHost buffers of
// `slot_bytes`, one stream and one pair of timing events each.
std::unique_ptr<DeviceCopier> make_copier(std::byte* device, std::uint64_t size,
                                          std::uint64_t slot_bytes, int slots);

}  // namespace ckpt::harness::cuda
