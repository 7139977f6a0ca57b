#include "harness/memory/memory_spaces.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "harness/memory/host_space.hpp"

#if CKPT_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "harness/memory/cuda_space.hpp"
#endif
#if CKPT_HAVE_KOKKOS
#include <Kokkos_Core.hpp>

#include "harness/memory/kokkos_space.hpp"
#endif

namespace ckpt::harness {
namespace {

std::unique_ptr<MemorySpace> make_space(MemorySpaceKind kind) {
  switch (kind) {
    case MemorySpaceKind::host:
      return make_host_space();
    case MemorySpaceKind::pinned:
#if CKPT_HAVE_CUDA
      if (const auto why = cuda_unavailable()) return make_locked_host_space(*why);
      return make_cuda_pinned_space();
#else
      return make_locked_host_space("this build has no CUDA");
#endif
    case MemorySpaceKind::cuda:
#if CKPT_HAVE_CUDA
      return make_cuda_space();
#else
      break;
#endif
    case MemorySpaceKind::kokkos:
#if CKPT_HAVE_KOKKOS
      return make_kokkos_space();
#else
      break;
#endif
  }
  throw std::logic_error("make_space: an unavailable memory space");
}

}  // namespace

MemorySpaces::MemorySpaces() = default;
MemorySpaces::~MemorySpaces() = default;

std::optional<std::string> MemorySpaces::unavailable(MemorySpaceKind kind) const {
  switch (kind) {
    case MemorySpaceKind::host:
    case MemorySpaceKind::pinned:
      return std::nullopt;
    case MemorySpaceKind::cuda:
#if CKPT_HAVE_CUDA
      return cuda_unavailable();
#else
      return std::string(
          "this build has no CUDA (configure with -DCKPT_WITH_CUDA=ON where the CUDA toolkit is "
          "installed)");
#endif
    case MemorySpaceKind::kokkos:
#if CKPT_HAVE_KOKKOS
      return std::nullopt;
#else
      return std::string(
          "this build has no Kokkos (configure with -DCKPT_WITH_KOKKOS=ON where Kokkos is "
          "installed, "
          "e.g. Debian's libtrilinos-kokkos-dev)");
#endif
  }
  return std::nullopt;
}

MemorySpace& MemorySpaces::get(MemorySpaceKind kind) {
  auto& space = spaces_[static_cast<std::size_t>(kind)];
  if (space) return *space;
  if (const auto why = unavailable(kind)) {
    throw std::runtime_error(
        fmt::format("memory.space = \"{}\": {}", memory_space_name(kind), *why));
  }
  space = make_space(kind);
  return *space;
}

std::string memory_build_cuda() {
#if CKPT_HAVE_CUDA
  return fmt::format("{}.{}", CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#else
  return "off";
#endif
}

std::string memory_build_kokkos() {
#if CKPT_HAVE_KOKKOS
  return fmt::format("{}.{}.{}", KOKKOS_VERSION / 10000, KOKKOS_VERSION / 100 % 100,
                     KOKKOS_VERSION % 100);
#else
  return "off";
#endif
}

}  // namespace ckpt::harness
