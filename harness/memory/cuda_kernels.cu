#include <cstdint>

#include "harness/memory/cuda_kernels.hpp"
#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness::cuda {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::uint64_t kMaxBlocks = 8192;  // grid-stride beyond this

unsigned blocks_for(std::uint64_t words) {
  const std::uint64_t blocks = (words + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

__device__ std::uint64_t first_index() {
  return std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ std::uint64_t stride() {
  return std::uint64_t{gridDim.x} * blockDim.x;
}

__global__ void fill_kernel(unsigned char* data, std::uint64_t bytes, DataPattern pattern,
                            std::uint64_t key, std::uint64_t global) {
  const std::uint64_t words = (bytes + 7) / 8;
  const bool aligned = reinterpret_cast<std::uintptr_t>(data) % 8 == 0;
  for (std::uint64_t i = first_index(); i < words; i += stride()) {
    const std::uint64_t w = pattern::pattern_word_at(pattern, key, global + 8 * i);
    const std::uint64_t n = bytes - 8 * i < 8 ? bytes - 8 * i : 8;
    if (aligned && n == 8) {
      reinterpret_cast<std::uint64_t*>(data)[i] = w;
    } else {
      for (std::uint64_t b = 0; b < n; ++b)
        data[8 * i + b] = static_cast<unsigned char>(w >> (8 * b));
    }
  }
}

__global__ void mismatch_kernel(const unsigned char* data, std::uint64_t bytes, DataPattern pattern,
                                std::uint64_t key, std::uint64_t global,
                                unsigned long long* first_bad) {
  const std::uint64_t words = (bytes + 7) / 8;
  const bool aligned = reinterpret_cast<std::uintptr_t>(data) % 8 == 0;
  for (std::uint64_t i = first_index(); i < words; i += stride()) {
    const std::uint64_t n = bytes - 8 * i < 8 ? bytes - 8 * i : 8;
    std::uint64_t found = 0;
    if (aligned && n == 8) {
      found = reinterpret_cast<const std::uint64_t*>(data)[i];
    } else {
      for (std::uint64_t b = 0; b < n; ++b) found |= std::uint64_t{data[8 * i + b]} << (8 * b);
    }
    const std::uint64_t expected = pattern::pattern_word_at(pattern, key, global + 8 * i);
    const std::uint64_t b = pattern::first_differing_byte(found, expected, n);
    if (b < 8) atomicMin(first_bad, static_cast<unsigned long long>(8 * i + b));
  }
}

}  // namespace

cudaError_t launch_fill(std::byte* data, std::uint64_t bytes, DataPattern pattern,
                        std::uint64_t key, std::uint64_t global, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  fill_kernel<<<blocks_for((bytes + 7) / 8), kThreads, 0, stream>>>(
      reinterpret_cast<unsigned char*>(data), bytes, pattern, key, global);
  return cudaGetLastError();
}

cudaError_t launch_first_mismatch(const std::byte* data, std::uint64_t bytes, DataPattern pattern,
                                  std::uint64_t key, std::uint64_t global,
                                  unsigned long long* first_bad, cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  mismatch_kernel<<<blocks_for((bytes + 7) / 8), kThreads, 0, stream>>>(
      reinterpret_cast<const unsigned char*>(data), bytes, pattern, key, global, first_bad);
  return cudaGetLastError();
}

__global__ void busy_kernel(float* data, std::uint64_t elements, int fma_rounds) {
  for (std::uint64_t i = first_index(); i < elements; i += stride()) {
    float v = data[i];
    for (int k = 0; k < fma_rounds; ++k) v = fmaf(v, 0.999999f, 1e-7f);
    data[i] = v;
  }
}

cudaError_t launch_busy(float* data, std::uint64_t elements, unsigned blocks, int fma_rounds,
                        cudaStream_t stream) {
  busy_kernel<<<blocks, kThreads, 0, stream>>>(data, elements, fma_rounds);
  return cudaGetLastError();
}

}  // namespace ckpt::harness::cuda
