#include "harness/engine/engine_checks.hpp"

#include <fmt/format.h>

#include "harness/engine/host_pool.hpp"
#include "harness/memory/gpu_load.hpp"

namespace ckpt::harness {

bool needs_mpi_thread_multiple(const Case& c, const backends::Capabilities& backend) {
  return c.training.enabled() && c.engine.kind != EngineKind::sync && backend.collective &&
         backend.background_thread;
}

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
  if (c.engine.host_pool_bytes != 0 && c.engine.host_pool_bytes < state_bytes) {
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

}  // namespace ckpt::harness
