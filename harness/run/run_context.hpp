#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/comm/comm.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/results/integrity.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// One finished iteration of a case, for progress lines.
struct IterationReport {
  int iteration = 0;   // 0-based; the warm-up iterations come first
  int iterations = 0;  // warm-up + timed
  bool warmup = false;
  double elapsed_seconds = 0;  // since the case's first iteration began
  std::optional<double> write_gib_s, read_gib_s;
  std::optional<double> write_seconds, read_seconds, verify_seconds;
  std::string cache_policy;  // what was applied before the restore
};

// Called on process 0 after every iteration, between iterations (never inside a timing); must
// not throw. May be empty.
using IterationObserver = std::function<void(const Case&, const IterationReport&)>;

// What every case of one `ckptbench run` shares.
struct RunContext {
  Comm& comm;
  std::optional<PhaseSelection> phase;   // --phase overrides campaign.phase
  const std::atomic<bool>& interrupted;  // set by SIGINT / SIGTERM
  MemorySpaces& memory;            // made on first use: Kokkos starts only if a kokkos case runs
  IterationObserver on_iteration;  // progress (process 0 only)
  std::vector<std::string> notes =
      {};  // for every case's notes (the open-file limit raised at start)
  // The durability probe of each campaign.target, taken once per run (process 0's).
  std::map<std::string, DurabilityProbe> durability_probes = {};
};

}  // namespace ckpt::harness
