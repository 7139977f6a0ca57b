#include "harness/memory/cuda_gpu_load.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "harness/memory/cuda_kernels.hpp"
#include "harness/memory/cuda_support.hpp"

namespace ckpt::harness {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kBlocksPerSm = 8;
constexpr int kFmaRounds = 32;  // per element: memory-bound still, with the SMs' FMA units busy too
constexpr std::uint64_t kMinBufferBytes = std::uint64_t{256} << 20;
constexpr int kCalibrationLaunches = 5;

struct DeviceFree {
  void operator()(float* p) const noexcept { cudaFree(p); }
};

class CudaGpuLoad final : public GpuLoad {
 public:
  CudaGpuLoad() {
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    cudaDeviceProp prop{};
    cuda::check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    blocks_ = static_cast<unsigned>(std::max(1, prop.multiProcessorCount) * kBlocksPerSm);
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda::check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    // Several times the L2 cache, so that every pass streams from HBM; at most 1/8 of free memory.
    const std::uint64_t want = std::max<std::uint64_t>(
        kMinBufferBytes, std::uint64_t{8} * static_cast<std::uint64_t>(prop.l2CacheSize));
    const std::uint64_t bytes =
        std::max<std::uint64_t>(std::min<std::uint64_t>(want, free_bytes / 8), 1 << 20);
    elements_ = bytes / sizeof(float);
    void* raw = nullptr;
    cuda::check(cudaMalloc(&raw, elements_ * sizeof(float)), "cudaMalloc (GPU load buffer)");
    float* p = static_cast<float*>(raw);
    buffer_.reset(p);
    cuda::check(cudaMemsetAsync(p, 0, elements_ * sizeof(float), stream_.get()),
                "cudaMemsetAsync (GPU load buffer)");
    launch();  // warm-up
    cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize (GPU load)");
    const cuda::Event start, end;
    cuda::check(cudaEventRecord(start.get(), stream_.get()), "cudaEventRecord");
    for (int k = 0; k < kCalibrationLaunches; ++k) launch();
    cuda::check(cudaEventRecord(end.get(), stream_.get()), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(end.get()), "cudaEventSynchronize");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, start.get(), end.get()), "cudaEventElapsedTime");
    kernel_seconds_ = std::max(1e-6, static_cast<double>(ms) / 1000.0 / kCalibrationLaunches);
  }

  double kernel_seconds() const override { return kernel_seconds_; }

  void run_for(double seconds) override {
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds));
    while (Clock::now() < end) {
      const double remaining = std::chrono::duration<double>(end - Clock::now()).count();
      const auto launches =
          std::clamp<std::int64_t>(static_cast<std::int64_t>(remaining / kernel_seconds_), 1, 256);
      for (std::int64_t k = 0; k < launches; ++k) launch();
      cuda::check(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize (GPU load)");
    }
  }

 private:
  void launch() {
    cuda::check(cuda::launch_busy(buffer_.get(), elements_, blocks_, kFmaRounds, stream_.get()),
                "GPU load kernel launch");
  }

  cuda::Stream stream_;  // non-blocking: the copier's streams run beside it
  std::unique_ptr<float, DeviceFree> buffer_;
  std::uint64_t elements_ = 0;
  unsigned blocks_ = 1;
  double kernel_seconds_ = 1e-3;
};

}  // namespace

std::unique_ptr<GpuLoad> make_cuda_gpu_load() {
  return std::make_unique<CudaGpuLoad>();
}

}  // namespace ckpt::harness
