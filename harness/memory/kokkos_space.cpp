#include "harness/memory/kokkos_space.hpp"

#include <fmt/format.h>

#include <Kokkos_Core.hpp>
#include <atomic>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "harness/memory/host_space.hpp"
#include "harness/memory/pattern_dispatch.hpp"
#include "harness/memory/pattern_words.hpp"

namespace ckpt::harness {
namespace {

using Execution = Kokkos::DefaultExecutionSpace;
using Words = Kokkos::RangePolicy<Execution, Kokkos::IndexType<std::int64_t>>;
constexpr std::uint64_t kAlignment = 4096;  // O_DIRECT needs page-aligned memory

// Whether this process has finalised Kokkos. Kokkos itself is process-wide state and cannot be
// started again after finalize (3.4 then corrupts the heap: its Serial team pool is left
// dangling; 4.x refuses), so this mirrors one bit of it to fail clearly instead.
std::atomic<bool>& finalized_once() {
  static std::atomic<bool> finalized{false};
  return finalized;
}

// Kokkos for the life of this object, unless it was running already (then left alone).
class KokkosRuntime {
 public:
  KokkosRuntime() {
    if (Kokkos::is_initialized()) return;
    if (finalized_once().load()) {
      throw std::runtime_error(
          "memory.space = \"kokkos\": Kokkos was finalised earlier in this process and cannot "
          "start again; run one "
          "campaign per process, or keep a MemorySpaces with Kokkos started for the life of the "
          "process");
    }
#if KOKKOS_VERSION >= 40000
    Kokkos::initialize(Kokkos::InitializationSettings().set_disable_warnings(true));
#else
    Kokkos::InitArguments arguments;
    arguments.disable_warnings = true;
    Kokkos::initialize(arguments);
#endif
    owned_ = true;
  }
  ~KokkosRuntime() {
    if (!owned_) return;
    Kokkos::finalize();
    finalized_once() = true;
  }
  KokkosRuntime(const KokkosRuntime&) = delete;
  KokkosRuntime& operator=(const KokkosRuntime&) = delete;

 private:
  bool owned_ = false;
};

std::int64_t words_of(std::uint64_t bytes) {
  return static_cast<std::int64_t>((bytes + 7) / 8);
}

// Byte `b` of the range's word `i` goes to data[8i + b] for b < n (n = 8 but for the last word).
KOKKOS_INLINE_FUNCTION std::uint64_t valid_bytes(std::uint64_t bytes, std::int64_t i) {
  const std::uint64_t left = bytes - 8 * static_cast<std::uint64_t>(i);
  return left < 8 ? left : 8;
}

// Whole words as one 8-byte access (memcpy: the data need not be 8-byte aligned), the last
// partial word byte by byte.
KOKKOS_INLINE_FUNCTION void store_word(unsigned char* p, std::uint64_t w, std::uint64_t n) {
  if (n == 8) {
    std::memcpy(p, &w, 8);
  } else {
    for (std::uint64_t b = 0; b < n; ++b) p[b] = static_cast<unsigned char>(w >> (8 * b));
  }
}

KOKKOS_INLINE_FUNCTION std::uint64_t load_word(const unsigned char* p, std::uint64_t n) {
  std::uint64_t w = 0;
  if (n == 8) {
    std::memcpy(&w, p, 8);
  } else {
    for (std::uint64_t b = 0; b < n; ++b) w |= static_cast<std::uint64_t>(p[b]) << (8 * b);
  }
  return w;
}

// The pattern is a template argument so that the kernels carry no per-word switch (as the
// host's fill_pattern and first_mismatch).
template <DataPattern P>
void fill_range(unsigned char* data, std::uint64_t bytes, std::uint64_t key, std::uint64_t global) {
  Kokkos::parallel_for(
      "ckptbench::fill", Words(0, words_of(bytes)), KOKKOS_LAMBDA(const std::int64_t i) {
        const std::uint64_t w =
            pattern::pattern_word_at(P, key, global + 8 * static_cast<std::uint64_t>(i));
        store_word(data + 8 * i, w, valid_bytes(bytes, i));
      });
}

template <DataPattern P>
std::uint64_t mismatch_in(const unsigned char* data, std::uint64_t bytes, std::uint64_t key,
                          std::uint64_t global) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  Kokkos::parallel_reduce(
      "ckptbench::verify", Words(0, words_of(bytes)),
      KOKKOS_LAMBDA(const std::int64_t i, std::uint64_t& lowest) {
        const std::uint64_t n = valid_bytes(bytes, i);
        const std::uint64_t found = load_word(data + 8 * i, n);
        const std::uint64_t b = pattern::first_differing_byte(
            found, pattern::pattern_word_at(P, key, global + 8 * static_cast<std::uint64_t>(i)), n);
        if (b < 8 && 8 * static_cast<std::uint64_t>(i) + b < lowest)
          lowest = 8 * static_cast<std::uint64_t>(i) + b;
      },
      Kokkos::Min<std::uint64_t>(first));
  return first;
}

void fill_range(unsigned char* data, const PatternRange& r, DataPattern pattern) {
  return with_pattern(pattern, [&](auto p) {
    return fill_range<decltype(p)::value>(data + r.offset, r.bytes, r.key, r.global_offset);
  });
}

std::uint64_t mismatch_in(const unsigned char* data, const PatternRange& r, DataPattern pattern) {
  return with_pattern(pattern, [&](auto p) {
    return mismatch_in<decltype(p)::value>(data + r.offset, r.bytes, r.key, r.global_offset);
  });
}

// A View with room to start the data on a page boundary; host-addressable (checked by the space),
// so copies and checksums are HostAddressableBuffer's.
class KokkosBuffer final : public HostAddressableBuffer {
 public:
  KokkosBuffer(std::shared_ptr<KokkosRuntime> runtime, Kokkos::View<unsigned char*> storage,
               std::uint64_t bytes)
      : HostAddressableBuffer({aligned(storage), bytes, backends::MemoryKind::host}),
        runtime_(std::move(runtime)),
        storage_(std::move(storage)) {}

  void zero() override {
    unsigned char* data = reinterpret_cast<unsigned char*>(view().data);
    const std::uint64_t bytes = size();
    Kokkos::parallel_for(
        "ckptbench::zero", Words(0, words_of(bytes)), KOKKOS_LAMBDA(const std::int64_t i) {
          store_word(data + 8 * i, 0, valid_bytes(bytes, i));
        });
    Kokkos::fence();
  }

  void fill(std::span<const PatternRange> ranges, DataPattern pattern) override {
    check_ranges(ranges, size());
    auto* data = reinterpret_cast<unsigned char*>(view().data);
    for (const PatternRange& r : ranges) fill_range(data, r, pattern);
    Kokkos::fence();
  }

  std::optional<Mismatch> first_mismatch(std::span<const PatternRange> ranges,
                                         DataPattern pattern) const override {
    check_ranges(ranges, size());
    const auto* data = reinterpret_cast<const unsigned char*>(view().data);
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const std::uint64_t bad = mismatch_in(data, ranges[i], pattern);
      if (bad != std::numeric_limits<std::uint64_t>::max())
        return Mismatch{i, bad, data[ranges[i].offset + bad]};
    }
    return std::nullopt;
  }

 private:
  static std::byte* aligned(const Kokkos::View<unsigned char*>& storage) {
    const auto address = reinterpret_cast<std::uintptr_t>(storage.data());
    return reinterpret_cast<std::byte*>((address + kAlignment - 1) / kAlignment * kAlignment);
  }

  std::shared_ptr<KokkosRuntime>
      runtime_;  // outlives storage_: members are destroyed in reverse order
  Kokkos::View<unsigned char*> storage_;
};

class KokkosSpace final : public MemorySpace {
 public:
  KokkosSpace() : runtime_(std::make_shared<KokkosRuntime>()) {
    if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, Execution::memory_space>::accessible) {
      throw std::runtime_error(
          fmt::format("memory.space = \"kokkos\": this Kokkos build's default memory space ({}) is "
                      "not host-accessible; ckptbench "
                      "stages device memory only for memory.space = \"cuda\"",
                      Execution::memory_space::name()));
    }
  }
  MemorySpaceKind kind() const override { return MemorySpaceKind::kokkos; }
  std::vector<std::string> notes() const override {
    return {fmt::format("memory.space = \"kokkos\": Kokkos {}.{}.{}, execution space {}",
                        KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100,
                        Execution::name())};
  }
  std::unique_ptr<Buffer> allocate(std::uint64_t bytes) override {
    // The View's own initialisation zeroes (and so pre-touches) every page.
    Kokkos::View<unsigned char*> storage;
    try {
      storage = Kokkos::View<unsigned char*>("ckptbench buffer", bytes + kAlignment);
      Kokkos::fence();
    } catch (const std::exception& e) {
      throw std::runtime_error(
          fmt::format("memory.space = \"kokkos\": cannot allocate {} bytes: {}", bytes, e.what()));
    }
    return std::make_unique<KokkosBuffer>(runtime_, std::move(storage), bytes);
  }

 private:
  std::shared_ptr<KokkosRuntime> runtime_;
};

}  // namespace

std::unique_ptr<MemorySpace> make_kokkos_space() {
  return std::make_unique<KokkosSpace>();
}

}  // namespace ckpt::harness
