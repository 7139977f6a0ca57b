#include "harness/memory/cuda_space.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

#include "harness/memory/checksum.hpp"
#include "harness/memory/cuda_kernels.hpp"
#include "harness/memory/cuda_support.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/host_space.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kReadBackChunk = std::uint64_t{16}
                                         << 20;  // checksums read device memory in these

// This process's place among the processes of its node, from the launcher's environment.
int local_rank() {
  for (const char* name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"}) {
    if (const char* value = std::getenv(name)) return std::max(0, std::atoi(value));
  }
  return 0;
}

// cudaMalloc memory, zeroed; one stream for its kernels.
class DeviceBuffer final : public Buffer {
 public:
  explicit DeviceBuffer(std::uint64_t bytes) : size_(bytes) {
    void* p = nullptr;
    cuda::check(cudaMalloc(&p, std::max<std::uint64_t>(bytes, 1)),
                fmt::format("memory.space = \"cuda\": cudaMalloc of {} bytes", bytes));
    data_ = static_cast<std::byte*>(p);
    zero();
  }
  ~DeviceBuffer() override { cudaFree(data_); }

  backends::MemoryView view() const override {
    return {data_, size_, backends::MemoryKind::device};
  }

  void zero() override {
    cuda::check(cudaMemsetAsync(data_, 0, size_, stream_.get()), "cudaMemsetAsync");
    synchronize("cudaMemsetAsync");
  }

  void fill(std::span<const PatternRange> ranges, DataPattern pattern) override {
    check_ranges(ranges, size_);
    for (const PatternRange& r : ranges) {
      cuda::check(cuda::launch_fill(data_ + r.offset, r.bytes, pattern, r.key, r.global_offset,
                                    stream_.get()),
                  "fill kernel launch");
    }
    synchronize("fill kernel");
  }

  std::optional<Mismatch> first_mismatch(std::span<const PatternRange> ranges,
                                         DataPattern pattern) const override {
    check_ranges(ranges, size_);
    if (ranges.empty()) return std::nullopt;
    void* p = nullptr;
    cuda::check(cudaMalloc(&p, ranges.size() * sizeof(unsigned long long)),
                "cudaMalloc (verification results)");
    const std::unique_ptr<void, decltype(&cudaFree)> results(p, &cudaFree);
    auto* first_bad = static_cast<unsigned long long*>(p);
    cuda::check(
        cudaMemsetAsync(first_bad, 0xff, ranges.size() * sizeof(unsigned long long), stream_.get()),
        "cudaMemsetAsync");
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const PatternRange& r = ranges[i];
      cuda::check(cuda::launch_first_mismatch(data_ + r.offset, r.bytes, pattern, r.key,
                                              r.global_offset, first_bad + i, stream_.get()),
                  "verify kernel launch");
    }
    std::vector<unsigned long long> found(ranges.size());
    cuda::check(cudaMemcpyAsync(found.data(), first_bad, found.size() * sizeof(unsigned long long),
                                cudaMemcpyDeviceToHost, stream_.get()),
                "cudaMemcpyAsync (verification results)");
    synchronize("verify kernel");
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (found[i] == std::numeric_limits<unsigned long long>::max()) continue;
      std::byte byte{};
      copy_to_host(ranges[i].offset + found[i], {&byte, 1});
      return Mismatch{i, found[i], static_cast<std::uint8_t>(byte)};
    }
    return std::nullopt;
  }

  std::vector<std::uint64_t> checksums(std::span<const PatternRange> ranges) const override {
    check_ranges(ranges, size_);
    std::vector<std::byte> chunk(std::min<std::uint64_t>(kReadBackChunk, size_));
    std::vector<std::uint64_t> out;
    for (const PatternRange& r : ranges) {
      Checksum64 sum;
      for (std::uint64_t done = 0; done < r.bytes;) {
        const std::uint64_t n = std::min<std::uint64_t>(kReadBackChunk, r.bytes - done);
        copy_to_host(r.offset + done, {chunk.data(), n});
        sum.update(chunk.data(), n);
        done += n;
      }
      out.push_back(sum.value());
    }
    return out;
  }

  void copy_to_host(std::uint64_t offset, std::span<std::byte> out) const override {
    check_span(offset, out.size());
    cuda::check(cudaMemcpy(out.data(), data_ + offset, out.size(), cudaMemcpyDeviceToHost),
                "cudaMemcpy device -> host");
  }

  void copy_from_host(std::uint64_t offset, std::span<const std::byte> in) override {
    check_span(offset, in.size());
    cuda::check(cudaMemcpy(data_ + offset, in.data(), in.size(), cudaMemcpyHostToDevice),
                "cudaMemcpy host -> device");
  }

  std::unique_ptr<DeviceCopier> copier(std::uint64_t slot_bytes, int slots) const override {
    return cuda::make_copier(data_, size_, slot_bytes, slots);
  }

 private:
  void synchronize(std::string_view what) const {
    cuda::check(cudaStreamSynchronize(stream_.get()), what);
  }
  void check_span(std::uint64_t offset, std::uint64_t bytes) const {
    if (offset > size_ || bytes > size_ - offset) {
      throw std::out_of_range(fmt::format("bytes [{}, {}) lie outside the {}-byte device buffer",
                                          offset, offset + bytes, size_));
    }
  }

  cuda::Stream stream_;
  std::byte* data_ = nullptr;
  std::uint64_t size_ = 0;
};

class CudaSpace final : public MemorySpace {
 public:
  CudaSpace() {
    int count = 0;
    cuda::check(cudaGetDeviceCount(&count), "memory.space = \"cuda\": cudaGetDeviceCount");
    device_ = local_rank() % std::max(count, 1);
    cuda::check(cudaSetDevice(device_),
                fmt::format("memory.space = \"cuda\": cudaSetDevice({})", device_));
    cudaDeviceProp prop{};
    cuda::check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    note_ = fmt::format("memory.space = \"cuda\": device {} of {} ({})", device_, count, prop.name);
  }
  MemorySpaceKind kind() const override { return MemorySpaceKind::cuda; }
  std::vector<std::string> notes() const override { return {note_}; }
  std::unique_ptr<Buffer> allocate(std::uint64_t bytes) override {
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");
    return std::make_unique<DeviceBuffer>(bytes);
  }

 private:
  int device_ = 0;
  std::string note_;
};

class CudaPinnedBuffer final : public HostAddressableBuffer {
 public:
  explicit CudaPinnedBuffer(cuda::PinnedMemory memory)
      : HostAddressableBuffer({memory.data(), memory.size(), backends::MemoryKind::pinned}),
        memory_(std::move(memory)) {}

 private:
  cuda::PinnedMemory memory_;
};

class CudaPinnedSpace final : public MemorySpace {
 public:
  MemorySpaceKind kind() const override { return MemorySpaceKind::pinned; }
  std::unique_ptr<Buffer> allocate(std::uint64_t bytes) override {
    return std::make_unique<CudaPinnedBuffer>(cuda::PinnedMemory(bytes));
  }
};

}  // namespace

std::optional<std::string> cuda_unavailable() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return fmt::format("no CUDA device (cudaGetDeviceCount: {})", cuda::describe(error));
  if (count == 0) return std::string("no CUDA device (cudaGetDeviceCount: 0 devices)");
  return std::nullopt;
}

std::unique_ptr<MemorySpace> make_cuda_space() {
  return std::make_unique<CudaSpace>();
}

std::unique_ptr<MemorySpace> make_cuda_pinned_space() {
  return std::make_unique<CudaPinnedSpace>();
}

}  // namespace ckpt::harness
