#pragma once

// Private to harness/memory: the CUDA GpuLoad, which make_gpu_load returns on a CUDA device.

#include <memory>

#include "harness/memory/gpu_load.hpp"

namespace ckpt::harness {

// Precondition: a CUDA device (cuda_unavailable() is nullopt).
std::unique_ptr<GpuLoad> make_cuda_gpu_load();

}  // namespace ckpt::harness
