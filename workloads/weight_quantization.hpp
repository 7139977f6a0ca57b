#pragma once

// Block-quantized weights (WeightFormat::fp8_block), as DeepSeek-V3's checkpoints and
// transformers' FineGrainedFP8 store them: each linear weight `X.weight` [.., rows, cols] in
// FP8 E4M3, and beside it `X.weight_scale_inv` in float32 with one scale per 128 x 128 block,
// [.., ceil(rows / 128), ceil(cols / 128)] (a fused expert tensor `X.gate_up_proj` gets
// `X.gate_up_proj_scale_inv`, its leading expert dimension kept). A scale is split by tensor and
// expert parallelism as its weight is, so each rank holds the scales of its own blocks; a split
// that cuts a block is refused.

#include <cstdint>
#include <string>
#include <string_view>

#include "workloads/parallel_spec.hpp"
#include "workloads/tensor_catalog.hpp"

namespace ckpt::workloads {

inline constexpr std::int64_t kFp8BlockSize = 128;

// The name of the scale tensor of weight `pattern`: "X.weight" -> "X.weight_scale_inv", a fused
// expert tensor "X.down_proj" -> "X.down_proj_scale_inv" (transformers' Fp8Quantize).
std::string fp8_scale_name(std::string_view pattern);

// Stores every linear weight of `catalog` in fp8 and puts its scale tensor right after it.
void quantize_fp8_blocks(TensorCatalog& catalog);

// Checks a quantized catalog against the parallelism and the state: scope weights (an inference
// checkpoint), and no TP or EP split that cuts a 128 x 128 block. Throws SpecError naming the
// tensor and the fix: key "tp" or "ep" for a split, "weights" for the state.
void validate_fp8_blocks(const TensorCatalog& catalog, const ParallelSpec& parallel,
                         const StateSpec& state);

}  // namespace ckpt::workloads
