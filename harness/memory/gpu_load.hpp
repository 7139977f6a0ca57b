#pragma once

// The GPU load of training.compute = "gpu": a busy kernel on a non-blocking stream of its own
// that keeps the SMs and HBM loaded (a streaming read-modify-write over a large device buffer
// with FMA work per element, one block per SM several times over), so that the engines'
// device->host copies, on the copier's streams, contend as in real training.

#include <memory>
#include <optional>
#include <string>

namespace ckpt::harness {

class GpuLoad {
 public:
  virtual ~GpuLoad() = default;
  // Keeps the GPU busy for `seconds` (kernels launched back to back, each of about
  // kernel_seconds(), until the time elapsed), then waits for the last. Throws
  // std::runtime_error with the CUDA error.
  virtual void run_for(double seconds) = 0;
  // One kernel's duration, measured at construction.
  virtual double kernel_seconds() const = 0;
};

// Why there can be no GPU load here ("this build has no CUDA ..." or "no CUDA device
// (cudaGetDeviceCount: ...)"), or nullopt.
std::optional<std::string> gpu_load_unavailable();

// Allocates the load's buffer and calibrates its kernel. Throws std::runtime_error
// "training.compute = \"gpu\" needs a CUDA device; none found: <why>" where there is none.
std::unique_ptr<GpuLoad> make_gpu_load();

}  // namespace ckpt::harness
