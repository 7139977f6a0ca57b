#include "harness/engine/engine_checks.hpp"

#include <fmt/format.h>

#include "harness/comm/comm.hpp"
#include "harness/engine/host_pool.hpp"
#include "harness/engine/tier_files.hpp"
#include "harness/engine/tier_layout.hpp"
#include "harness/engine/tier_recovery.hpp"
#include "harness/memory/gpu_load.hpp"

namespace ckpt::harness {

bool needs_mpi_thread_multiple(const Case& c, const backends::Capabilities& backend) {
  if (c.training.enabled() && c.engine.kind == EngineKind::tiered && c.engine.tiers.replicas > 1)
    return true;
  return c.training.enabled() && c.engine.kind != EngineKind::sync && backend.collective &&
         backend.background_thread;
}

std::optional<std::string> tier_problem(const Case& c, int processes, std::uint64_t state_bytes) {
  if (!c.training.enabled() || c.engine.kind != EngineKind::tiered) return std::nullopt;
  const TierSpec& t = c.engine.tiers;
  const std::optional<int> launch = launch_processes_per_node();
  if (auto problem = tier_layout_problem(t, processes, launch, state_bytes)) return problem;
  if (auto problem = local_tier_backend_problem(t.local_backend)) return problem;
  if (t.lost_nodes.empty()) return std::nullopt;
  // The loop's checkpoints are known up front: recover as if every one succeeded, so that losing
  // a whole clique before anything was drained is refused before any I/O.
  const TierLayout layout = tier_layout(t, processes, launch);
  const std::int64_t every = c.training.checkpoint_every;
  const std::int64_t taken = c.training.iterations / every;
  const std::int64_t drained = taken / t.drain_every * t.drain_every;
  std::vector<NodeHolding> nodes;
  for (int n = 0; n < layout.nodes(); ++n) nodes.push_back({taken * every - 1, layout.held_by(n)});
  const std::set<int> lost = node_set(t.lost_nodes);
  const auto plan =
      plan_recovery(layout, nodes, lost, drained > 0 ? drained * every - 1 : -1, t.drain_every);
  if (const auto* refusal = std::get_if<std::string>(&plan)) return *refusal;
  return std::nullopt;
}

bool recovers_from_tiers(const Case& c, PhaseSelection phase) {
  return phase == PhaseSelection::restore && c.training.enabled() &&
         c.engine.kind == EngineKind::tiered;
}

std::optional<std::string> tier_recovery_problem(const Case& c,
                                                 const backends::Capabilities& backend,
                                                 std::string_view what) {
  const bool host =
      c.memory_space == MemorySpaceKind::host || c.memory_space == MemorySpaceKind::pinned;
  if (host && !backend.collective) return std::nullopt;
  return fmt::format(
      "{} with {}: the recovery reads each process's part on its own, into host memory; use "
      "memory.space = \"host\" or \"pinned\" and a backend that is not collective (posix, uring)",
      what,
      host ? fmt::format("backend.name = \"{}\"", c.backend)
           : fmt::format("memory.space = \"{}\"", memory_space_name(c.memory_space)));
}

namespace {

// The tiered engine's own needs: whole snapshots in the pool, MPI from its flush thread.
std::optional<std::string> tiered_problem(const Case& c, const backends::Capabilities& backend,
                                          std::uint64_t state_bytes,
                                          const std::optional<std::string>& mpi_thread_level) {
  if (!c.engine.tiers.lost_nodes.empty()) {
    if (auto problem = tier_recovery_problem(c, backend, "tiers.lost_nodes")) return problem;
  }
  if (c.engine.host_pool_bytes != 0 && c.engine.host_pool_bytes < state_bytes) {
    return fmt::format(
        "engine.host_pool_bytes = {} with engine.name = \"tiered\": the tiered engine writes and "
        "sends whole snapshots from the pool, so it must hold one process's checkpoint ({} "
        "bytes); raise engine.host_pool_bytes to at least {} (or 0)",
        c.engine.host_pool_bytes, state_bytes, state_bytes);
  }
  if (c.engine.tiers.replicas > 1 && mpi_thread_level && !mpi_thread_level->empty() &&
      *mpi_thread_level != "MPI_THREAD_MULTIPLE") {
    return fmt::format(
        "engine.name = \"tiered\" with tiers.replicas = {}: the flush thread exchanges parts "
        "with the clique's peers while the loop makes its own MPI calls, which needs "
        "MPI_THREAD_MULTIPLE; this MPI granted {}; use tiers.replicas = 1 or an MPI built with "
        "thread support",
        c.engine.tiers.replicas, *mpi_thread_level);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> engine_problem(const Case& c, const backends::Capabilities& backend,
                                          std::uint64_t state_bytes,
                                          const std::optional<std::string>& mpi_thread_level) {
  if (!c.training.enabled()) return std::nullopt;
  if (c.training.compute == ComputeKind::gpu) {
    if (const auto why = gpu_load_unavailable()) {
      return fmt::format(
          "training.compute = \"gpu\" needs a CUDA device; none found: {}; use training.compute = "
          "\"sleep\" or \"spin\"",
          *why);
    }
  }
  const std::string_view engine = engine_name(c.engine.kind);
  if (c.engine.kind == EngineKind::sync) return std::nullopt;
  if (!backend.background_thread) {
    const auto why = backend.advice.find("background_thread");
    return fmt::format(
        "engine.name = \"{}\" with backend.name = \"{}\": the engine's flush thread would call the "
        "backend, and {}; use engine.name = \"sync\" or another backend (posix, uring, mpiio)",
        engine, c.backend,
        why == backend.advice.end() ? "it cannot be called from a second thread" : why->second);
  }
  if (backend.collective && mpi_thread_level && *mpi_thread_level != "MPI_THREAD_MULTIPLE") {
    return fmt::format(
        "engine.name = \"{}\" with backend.name = \"{}\": the collective backend makes MPI calls "
        "from "
        "the engine's flush thread while the loop makes its own, which needs MPI_THREAD_MULTIPLE; "
        "this "
        "MPI granted {}; use engine.name = \"sync\", a backend that is not collective (posix, "
        "uring), "
        "or an MPI built with thread support",
        engine, c.backend, mpi_thread_level->empty() ? "none (not started)" : *mpi_thread_level);
  }
  if (c.engine.kind == EngineKind::tiered) {
    if (auto problem = tiered_problem(c, backend, state_bytes, mpi_thread_level)) return problem;
  }
  if (c.engine.host_pool_bytes != 0 && c.engine.host_pool_bytes < state_bytes) {
    if (c.compression.enabled()) {
      return fmt::format(
          "engine.host_pool_bytes = {} with strategy.compression = \"{}\": a pool smaller than "
          "one process's checkpoint ({} bytes) flushes chunk by chunk, and the codec compresses "
          "the whole snapshot before its frames are written; raise engine.host_pool_bytes to at "
          "least {} (or 0), or set strategy.compression = \"none\"",
          c.engine.host_pool_bytes, compression_name(c.compression.codec), state_bytes,
          state_bytes);
    }
    if (c.selective.enabled()) {
      return fmt::format(
          "engine.host_pool_bytes = {} with {}: a pool smaller than one process's checkpoint ({} "
          "bytes) is a ring that flushes the whole state chunk by chunk, and these checkpoints "
          "write a part of it; raise engine.host_pool_bytes to at least {} (or 0), or turn the "
          "strategy off",
          c.engine.host_pool_bytes,
          c.selective.delta() ? fmt::format("strategy.delta_every = {}", c.selective.delta_every)
          : c.selective.experts > 0
              ? fmt::format("strategy.partial_experts = {}", c.selective.experts)
              : fmt::format("strategy.selective_every = {}", c.selective.every),
          state_bytes, state_bytes);
    }
    if (c.engine.host_pool_bytes < kMinRingBytes) {
      return fmt::format(
          "engine.host_pool_bytes = {} with engine.name = \"{}\": a pool smaller than one "
          "process's "
          "checkpoint ({} bytes) is a ring of chunks and needs at least {} bytes; raise "
          "engine.host_pool_bytes (0: one checkpoint)",
          c.engine.host_pool_bytes, engine, state_bytes, kMinRingBytes);
    }
    if (backend.collective) {
      return fmt::format(
          "engine.host_pool_bytes = {} with backend.name = \"{}\": a pool smaller than one "
          "process's "
          "checkpoint ({} bytes) flushes chunk by chunk, and a collective backend takes a "
          "process's "
          "whole plan in one call; raise engine.host_pool_bytes to at least {} (or 0)",
          c.engine.host_pool_bytes, c.backend, state_bytes, state_bytes);
    }
  }
  return std::nullopt;
}

std::uint64_t host_pool_allocation(const Case& c, std::uint64_t state_bytes) {
  if (!c.training.enabled() || c.engine.kind == EngineKind::sync) return 0;
  return HostPool::allocation(c.engine.host_pool_bytes, state_bytes);
}

std::uint64_t tier_memory_allocation(const Case& c, std::uint64_t state_bytes) {
  const bool kept =
      c.training.enabled() && c.engine.kind == EngineKind::tiered && c.engine.tiers.memory;
  // The own part and, with F > 1, the clique's peers' replicas (MemoryTier).
  return kept ? state_bytes * static_cast<std::uint64_t>(c.engine.tiers.replicas) : 0;
}

}  // namespace ckpt::harness
