#pragma once

// Pattern kernels for device memory, compiled by nvcc. Host code calls these launchers; they
// enqueue on `stream` and return the launch error (cudaSuccess when enqueued).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "harness/memory/data_pattern_kind.hpp"

namespace ckpt::harness::cuda {

// Writes the pattern of tensor `key` from its global byte `global` on to device bytes
// [data, data + bytes).
cudaError_t launch_fill(std::byte* data, std::uint64_t bytes, DataPattern pattern,
                        std::uint64_t key, std::uint64_t global, cudaStream_t stream);

// Lowers *first_bad (device memory, set to ~0 beforehand) to the offset of the first byte of
// [data, data + bytes) that differs from the pattern of tensor `key` from global byte `global`
// on; leaves it when all match.
cudaError_t launch_first_mismatch(const std::byte* data, std::uint64_t bytes, DataPattern pattern,
                                  std::uint64_t key, std::uint64_t global,
                                  unsigned long long* first_bad, cudaStream_t stream);

}  // namespace ckpt::harness::cuda

namespace ckpt::harness::cuda {

// The GpuLoad's kernel: `blocks` blocks stream over `elements` floats of `data`,
// each element read, put through `fma_rounds` fused multiply-adds and written back.
cudaError_t launch_busy(float* data, std::uint64_t elements, unsigned blocks, int fma_rounds,
                        cudaStream_t stream);

}  // namespace ckpt::harness::cuda
