#include "harness/memory/gpu_load.hpp"

#include <stdexcept>

#if CKPT_HAVE_CUDA
#include "harness/memory/cuda_gpu_load.hpp"
#include "harness/memory/cuda_space.hpp"
#endif

namespace ckpt::harness {

std::optional<std::string> gpu_load_unavailable() {
#if CKPT_HAVE_CUDA
  return cuda_unavailable();
#else
  return std::string(
      "this build has no CUDA (configure with -DCKPT_WITH_CUDA=ON where the CUDA toolkit is "
      "installed)");
#endif
}

std::unique_ptr<GpuLoad> make_gpu_load() {
  if (const auto why = gpu_load_unavailable()) {
    throw std::runtime_error("training.compute = \"gpu\" needs a CUDA device; none found: " + *why);
  }
#if CKPT_HAVE_CUDA
  return make_cuda_gpu_load();
#else
  return nullptr;  // not reached: unavailable above
#endif
}

}  // namespace ckpt::harness
