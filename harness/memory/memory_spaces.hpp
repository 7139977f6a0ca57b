#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

// The memory spaces of one process, each made on first use and kept until this object goes:
// one per `ckptbench run`, so Kokkos is initialised once, and only when a kokkos case runs.
// Buffers must not outlive it (Kokkos buffers keep Kokkos itself alive regardless).
class MemorySpaces {
 public:
  MemorySpaces();
  ~MemorySpaces();
  MemorySpaces(const MemorySpaces&) = delete;
  MemorySpaces& operator=(const MemorySpaces&) = delete;

  // Why `kind` cannot be used by this build or on this machine ("no CUDA device (...)", "this
  // build has no Kokkos: ..."), or nullopt. Starts nothing.
  std::optional<std::string> unavailable(MemorySpaceKind kind) const;
  // The space, made now if need be. Throws std::runtime_error with unavailable()'s reason.
  MemorySpace& get(MemorySpaceKind kind);

 private:
  std::array<std::unique_ptr<MemorySpace>, 4> spaces_;
};

// What this build has, for the environment record: {"cuda": "13.0" or "off", "kokkos": "3.4.1" or
// "off"}.
std::string memory_build_cuda();
std::string memory_build_kokkos();

}  // namespace ckpt::harness
