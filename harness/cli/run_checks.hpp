#pragma once

// What `ckptbench run` checks before its first I/O, and what `--dry-run` shows of each case.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "harness/memory/memory_spaces.hpp"
#include "harness/results/mlperf_rules.hpp"

namespace ckpt::harness {

struct CaseCheck {
  std::size_t ranks = 0;    // modeled ranks emulated
  std::uint64_t bytes = 0;  // payload per checkpoint
  std::uint64_t files = 0;
  std::uint64_t extents = 0;
  std::uint64_t memory_per_process = 0;  // the buffers the run allocates on its largest process
  std::vector<std::string> problems;     // why the case would not start; empty when it would
  std::optional<MlperfVerdict> mlperf;   // [mlperf] cases: the rules checker's verdict
};

// Everything a run checks of a case before its I/O, with no I/O, no MPI and no allocation: the
// backend is available and takes its options, the memory space is usable here, the buffers of
// each of `processes` processes fit campaign.memory_budget, and the target is a writable
// directory without an older checkpoint (or, in the restore phase, holds a checkpoint this case
// can read). Reads the target and, to restore, the checkpoint's manifest. `mpi_thread_level`: the
// level MPI granted (Comm::thread_level), nullopt for a dry run (MPI not started: not checked).
// `read_checks` (a dry run): also what the read refuses before planning, with its words — a
// changed tensor list, checkpoint_hash or safetensors file, which a run reports as its case's
// failure (exit 1) instead.
CaseCheck check_case(const Case& c, PhaseSelection phase, int processes, const MemorySpaces& spaces,
                     const std::optional<std::string>& mpi_thread_level = std::nullopt,
                     bool read_checks = false);

// Every case's problems as lines "case 0: …"; a problem several cases share is one line
// ("cases 0, 1, 2: …").
std::vector<std::string> problem_lines(const Campaign& campaign,
                                       const std::vector<CaseCheck>& checks);

}  // namespace ckpt::harness
