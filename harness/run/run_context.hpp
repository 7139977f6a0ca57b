#pragma once

#include <atomic>
#include <optional>
#include <ostream>

#include "harness/campaign/case.hpp"
#include "harness/comm/comm.hpp"
#include "harness/memory/memory_spaces.hpp"

namespace ckpt::harness {

// What every case of one `ckptbench run` shares.
struct RunContext {
  Comm& comm;
  std::optional<PhaseSelection> phase;      // --phase overrides campaign.phase
  const std::atomic<bool>& interrupted;     // set by SIGINT / SIGTERM
  std::ostream& progress;                   // progress lines (process 0 only)
  MemorySpaces& memory;                     // made on first use: Kokkos starts only if a kokkos case runs
};

}  // namespace ckpt::harness
