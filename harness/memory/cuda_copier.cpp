#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "harness/memory/cuda_support.hpp"

namespace ckpt::harness::cuda {
namespace {

// One copy stream for every slot: the copies run one after another (they share the link anyway)
// while the host writes or reads the other slots, and each copy's events time that copy alone
// rather than its wait behind another.
class CudaCopier final : public DeviceCopier {
 public:
  CudaCopier(std::byte* device, std::uint64_t size, std::uint64_t slot_bytes, int slots)
      : device_(device), size_(size), slot_bytes_(slot_bytes) {
    slots_.reserve(static_cast<std::size_t>(slots));
    for (int i = 0; i < slots; ++i)
      slots_.push_back(Slot{PinnedMemory(slot_bytes), Event(), Event(), false});
  }

  ~CudaCopier() override {
    for (Slot& s : slots_) {
      if (s.pending) cudaEventSynchronize(s.end.get());
    }
  }

  int slots() const override { return static_cast<int>(slots_.size()); }
  std::uint64_t slot_bytes() const override { return slot_bytes_; }
  backends::MemoryView slot(int index) const override {
    const Slot& s = slots_.at(static_cast<std::size_t>(index));
    return {s.memory.data(), s.memory.size(), backends::MemoryKind::pinned};
  }

  void start(int index, std::uint64_t offset, std::uint64_t bytes, bool to_host) override {
    Slot& s = slots_.at(static_cast<std::size_t>(index));
    if (s.pending) throw std::logic_error("CudaCopier: slot reused before wait()");
    if (bytes > slot_bytes_ || offset > size_ || bytes > size_ - offset) {
      throw std::out_of_range(
          fmt::format("CudaCopier: copy of [{}, {}) exceeds the {}-byte buffer or the {}-byte slot",
                      offset, offset + bytes, size_, slot_bytes_));
    }
    check(cudaEventRecord(s.begin.get(), stream_.get()), "cudaEventRecord");
    const cudaError_t copied = to_host ? cudaMemcpyAsync(s.memory.data(), device_ + offset, bytes,
                                                         cudaMemcpyDeviceToHost, stream_.get())
                                       : cudaMemcpyAsync(device_ + offset, s.memory.data(), bytes,
                                                         cudaMemcpyHostToDevice, stream_.get());
    check(copied, fmt::format("cudaMemcpyAsync {} of {} bytes at device offset {}",
                              to_host ? "device -> host" : "host -> device", bytes, offset));
    check(cudaEventRecord(s.end.get(), stream_.get()), "cudaEventRecord");
    s.pending = true;
  }

  double wait(int index) override {
    Slot& s = slots_.at(static_cast<std::size_t>(index));
    if (!s.pending) return 0;
    s.pending = false;
    check(cudaEventSynchronize(s.end.get()), "cudaEventSynchronize (staging copy)");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, s.begin.get(), s.end.get()), "cudaEventElapsedTime");
    return static_cast<double>(ms) / 1000.0;
  }

 private:
  struct Slot {
    PinnedMemory memory;
    Event begin;
    Event end;
    bool pending;
  };
  std::byte* device_;
  std::uint64_t size_;
  std::uint64_t slot_bytes_;
  Stream stream_;
  std::vector<Slot> slots_;
};

}  // namespace

std::unique_ptr<DeviceCopier> make_copier(std::byte* device, std::uint64_t size,
                                          std::uint64_t slot_bytes, int slots) {
  return std::make_unique<CudaCopier>(device, size, slot_bytes, slots);
}

}  // namespace ckpt::harness::cuda
