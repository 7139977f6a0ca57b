#include "harness/memory/cuda_support.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace ckpt::harness::cuda {

std::string describe(cudaError_t error) {
  return fmt::format("error {} {}: {}", static_cast<int>(error), cudaGetErrorName(error),
                     cudaGetErrorString(error));
}

void check(cudaError_t error, std::string_view what) {
  if (error != cudaSuccess) throw std::runtime_error(fmt::format("{}: {}", what, describe(error)));
}

Stream::Stream() {
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

Stream::~Stream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Event::Event() {
  check(cudaEventCreate(&event_), "cudaEventCreate");
}

Event::~Event() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

PinnedMemory::PinnedMemory(std::uint64_t bytes) : size_(bytes) {
  void* p = nullptr;
  check(cudaMallocHost(&p, std::max<std::uint64_t>(bytes, 1)),
        fmt::format("cudaMallocHost of {} bytes", bytes));
  data_ = static_cast<std::byte*>(p);
  std::memset(data_, 0, size_);
}

PinnedMemory::~PinnedMemory() {
  if (data_ != nullptr) cudaFreeHost(data_);
}

}  // namespace ckpt::harness::cuda
