#pragma once

// CUDA memory spaces (built with CKPT_HAVE_CUDA only; MemorySpaces chooses).

#include <memory>
#include <optional>
#include <string>

#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

// nullopt when this process can use a CUDA device, else why not, e.g. "no CUDA device
// (cudaGetDeviceCount: error 35 cudaErrorInsufficientDriver: ...)".
std::optional<std::string> cuda_unavailable();

// Device memory (cudaMalloc) on this process's device, filled and verified by kernels. With
// several processes on a node, process i of the node uses device i modulo the device count.
std::unique_ptr<MemorySpace> make_cuda_space();

// Pinned host memory from cudaMallocHost.
std::unique_ptr<MemorySpace> make_cuda_pinned_space();

}  // namespace ckpt::harness
