#pragma once

// Where a shard's elements lie in its tensor, after model.scale: the coordinates the
// deterministic contents (fill_pattern) and the resharding planner (harness/loadplan) use.
//
// model.scale = s shrinks a tensor by dividing its leading dimension by s. Where that is exact —
// s divides the leading dimension of the global shape and of the shard's slice offset and extent
// — every layout's slices of the smaller tensor are its slices divided by s, and a ZeRO flat range
// [b, e) of a slice becomes [b / s, e / s) of the smaller slice (the ranges of one slice still
// tile it), so every layout of the same model tiles the same smaller tensors and a checkpoint
// written under one parallelism restores under another. Elsewhere (a leading dimension s does not
// divide) the shard keeps its first max(1, n / s) elements in the full tensor's coordinates:
// same-layout restores verify, resharding refuses the tensor.
// A shard marked `unscaled` (FP8 block scales) keeps its full coordinates at any scale.

#include <cstdint>
#include <string_view>
#include <vector>

#include "harness/memory/data_pattern_kind.hpp"
#include "workloads/dtype.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

struct ShardGeometry {
  std::vector<std::int64_t> global_shape;  // of the (scaled) tensor
  std::vector<std::int64_t> offset;        // the slice, in the (scaled) tensor
  std::vector<std::int64_t> extent;
  std::int64_t flat_begin = 0;  // elements [flat_begin, flat_end) of the slice, row-major
  std::int64_t flat_end = 0;
  std::int64_t element_bytes = 2;
  bool exact = true;  // the coordinates are the scaled tensor's (always for scale 1)

  std::int64_t elements() const { return flat_end - flat_begin; }
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(elements() * element_bytes); }
};

// The shard's geometry at `scale` (≥ 1), as above.
ShardGeometry shard_geometry(const workloads::Shard& shard, std::int64_t scale);

// A stretch of a shard contiguous in the tensor's global row-major elements: shard elements
// [local, local + elements) (from flat_begin) are global elements [global, global + elements).
struct GlobalRun {
  std::int64_t local = 0;
  std::int64_t global = 0;
  std::int64_t elements = 0;
};

// The shard's runs in order: one for a dim-0 slice or a flat range inside one row, one per row
// for a dim-1 slice. Slices may cut any one dimension (or none).
std::vector<GlobalRun> global_runs(const ShardGeometry& geometry);

// The multi-index of global element `flat` in `shape` (for error messages): "[3, 17]".
std::string global_index_text(const std::vector<std::int64_t>& shape, std::int64_t flat);

// Seed of a tensor's deterministic contents: XXH3_64 of the name, a NUL, the seed and the state.
// One key per tensor and state, whatever the parallelism.
std::uint64_t tensor_data_key(std::string_view name, workloads::StateKind state,
                              std::uint64_t seed);

// The data key of a shard's tensor: tensor_data_key, and under data.pattern = "trained" with the
// tensor's content code (its state and element format, pattern::content_code) in its low bits.
std::uint64_t shard_data_key(const workloads::Shard& shard, std::uint64_t seed,
                             DataPattern pattern);

}  // namespace ckpt::harness
