#pragma once

// Combinations of [training], [engine] and the rest of a case that cannot work, found before
// anything is written; each problem names the keys involved.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "backends/backend.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// Whether the case makes MPI calls from an engine's flush thread (a collective backend, or the
// tiered engine's exchange with its peers), which needs MPI_THREAD_MULTIPLE: requested at MPI
// start only then.
bool needs_mpi_thread_multiple(const Case& c, const backends::Capabilities& backend);

// `state_bytes`: the largest process's state buffer. `mpi_thread_level`: what MPI granted
// (Comm::thread_level; "" without MPI), nullopt where MPI has not started (a dry run: not
// checked). nullopt when the case can run.
std::optional<std::string> engine_problem(const Case& c, const backends::Capabilities& backend,
                                          std::uint64_t state_bytes,
                                          const std::optional<std::string>& mpi_thread_level);

// engine.name = "tiered" with `processes` processes whose largest state buffer is `state_bytes`:
// the [tiers] layout that cannot work (tier_layout_problem, with the launcher's processes per
// node). nullopt for other engines and when it can.
std::optional<std::string> tier_problem(const Case& c, int processes, std::uint64_t state_bytes);

// A tiered [training] case run with --phase restore: the restarted job's recovery of the tiers'
// newest complete checkpoint (own node, a clique peer, else the backend) instead of a restore from
// the backend alone.
bool recovers_from_tiers(const Case& c, PhaseSelection phase);

// What keeps the tiers' recovery (`what`: the key or phase asking for it) from reading each
// process's part into its buffer: memory that is not the host's, or a collective backend; nullopt
// when it can.
std::optional<std::string> tier_recovery_problem(const Case& c,
                                                 const backends::Capabilities& backend,
                                                 std::string_view what);

// Bytes the host pool allocates per process for a state of `state_bytes` (0 unless async or
// lazy run a training loop): counted in the memory a case needs (dry run and memory_budget).
std::uint64_t host_pool_allocation(const Case& c, std::uint64_t state_bytes);

// Bytes the memory tier allocates per process for a state of `state_bytes` (tiers.memory of a
// tiered training loop; else 0): its own part and the F - 1 replicas of its clique's peers,
// counted like the host pool.
std::uint64_t tier_memory_allocation(const Case& c, std::uint64_t state_bytes);

}  // namespace ckpt::harness
