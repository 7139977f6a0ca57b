#pragma once

#include <cstdint>
#include <utility>

#include "workloads/parallel_spec.hpp"

namespace ckpt::workloads {

// Which transformer layers each pipeline stage holds: an even split, or Megatron's uneven
// split with a given number of layers on the first and/or last stage and the rest even.
class PipelineSplit {
 public:
  PipelineSplit() = default;
  // Throws SpecError ("pp", "pp_first_stage_layers", ...) when the layers cannot be split,
  // suggesting a first/last stage size that works.
  PipelineSplit(std::int64_t layers, const ParallelSpec& parallel);
  // DLIO's split: every stage gets layers / stages and the first layers % stages stages one
  // more. Needs 1 <= stages <= layers.
  static PipelineSplit front_loaded(std::int64_t layers, std::int64_t stages);

  std::int64_t stages() const { return stages_; }
  // Global layer range [first, last) of `stage`.
  std::pair<std::int64_t, std::int64_t> layers_of(std::int64_t stage) const;

 private:
  std::int64_t layers_ = 0;
  std::int64_t stages_ = 1;
  std::int64_t first_ = 0;  // layers on stage 0 when uneven, else 0
  std::int64_t last_ = 0;   // layers on the last stage when uneven, else 0
  std::int64_t per_stage_ = 0;
  std::int64_t front_loaded_ = -1;  // front_loaded(): stages holding per_stage_ + 1 layers; else -1
};

}  // namespace ckpt::workloads
