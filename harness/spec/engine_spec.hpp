#pragma once

// The campaign's [training] and [engine] tables: the emulated training loop and the checkpoint
// engine that runs inside it (harness/engine/README section in the top README).

#include <cstdint>
#include <optional>
#include <string_view>

namespace ckpt::harness {

// When and from where a checkpoint's IoPlan runs. sync: inline, the loop stops for write + sync
// + commit. async: the loop stops only to copy the state into the host pool; a background
// thread flushes and the commit follows. lazy: the copy itself runs in the background during the
// next iteration's compute; the loop waits only before that iteration's update.
enum class EngineKind { sync, async, lazy };
// What the compute part of an iteration does: sleep, spin a core, or (needs a GPU) a kernel.
enum class ComputeKind { sleep, spin, gpu };

struct TrainingSpec {
  int iterations = 0;              // 0: no training loop (bandwidth only, the harness's iterations)
  double iteration_seconds = 1.0;  // compute + update per iteration
  double update_fraction = 0.2;    // the update's share of iteration_seconds (the tail)
  int checkpoint_every = 1;        // a checkpoint is due after every checkpoint_every-th iteration
  ComputeKind compute = ComputeKind::sleep;

  bool enabled() const { return iterations > 0; }
};

struct EngineSpec {
  EngineKind kind = EngineKind::sync;
  std::uint64_t host_pool_bytes = 0;  // 0: one process's checkpoint (async, lazy)
};

std::string_view engine_name(EngineKind kind);
std::optional<EngineKind> parse_engine(std::string_view name);
std::string_view compute_name(ComputeKind kind);
std::optional<ComputeKind> parse_compute(std::string_view name);

}  // namespace ckpt::harness
