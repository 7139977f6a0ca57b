#pragma once

// The Kokkos memory space (built with CKPT_HAVE_KOKKOS only; MemorySpaces chooses).

#include <memory>

#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

// Kokkos::View memory of the default execution space, filled and verified by parallel_for and
// parallel_reduce kernels. Creating the space initialises Kokkos unless something else already
// did; the space and the buffers it made finalise it when the last of them goes. Throws
// std::runtime_error when the default memory space is not host-accessible (a GPU build of
// Kokkos: ckptbench has no staging for it; use memory.space = "cuda").
std::unique_ptr<MemorySpace> make_kokkos_space();

}  // namespace ckpt::harness
