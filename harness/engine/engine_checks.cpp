#include "harness/engine/engine_checks.hpp"

#include <fmt/format.h>

#include "harness/engine/host_pool.hpp"

namespace ckpt::harness {

std::optional<std::string> engine_problem(const Case& c, const backends::Capabilities& backend,
                                          std::uint64_t state_bytes) {
  if (!c.training.enabled()) return std::nullopt;
  if (c.training.compute == ComputeKind::gpu) {
    return "training.compute = \"gpu\": the busy kernel that loads the GPU while copies run is not built into this "
           "version, and it needs a CUDA device; use training.compute = \"sleep\" or \"spin\"";
  }
  const std::string_view engine = engine_name(c.engine.kind);
  if (c.engine.kind == EngineKind::sync) return std::nullopt;
  if (backend.collective) {
    return fmt::format("engine.name = \"{}\" with backend.name = \"{}\": a collective backend would make MPI calls "
                       "from the engine's flush thread, which needs MPI_THREAD_MULTIPLE (not requested); use "
                       "engine.name = \"sync\" or a backend that is not collective (posix, uring)",
                       engine, c.backend);
  }
  if (c.engine.host_pool_bytes != 0 && c.engine.host_pool_bytes < state_bytes) {
    if (c.engine.host_pool_bytes < kMinRingBytes) {
      return fmt::format("engine.host_pool_bytes = {} with engine.name = \"{}\": a pool smaller than one process's "
                         "checkpoint ({} bytes) is a ring of chunks and needs at least {} bytes; raise "
                         "engine.host_pool_bytes (0: one checkpoint)",
                         c.engine.host_pool_bytes, engine, state_bytes, kMinRingBytes);
    }
    if (backend.collective) {
      return fmt::format("engine.host_pool_bytes = {} with backend.name = \"{}\": a pool smaller than one process's "
                         "checkpoint ({} bytes) flushes chunk by chunk, and a collective backend takes a process's "
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
