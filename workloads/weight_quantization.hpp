#pragma once

// Block-quantized weights (WeightFormat::fp8_block), as DeepSeek-V3's checkpoints and
// transformers' FineGrainedFP8 store them: each linear weight `X.weight` [.., rows, cols] in
// FP8 E4M3, and beside it `X.weight_scale_inv` in float32 with one scale per 128 x 128 block,
// [.., ceil(rows / 128), ceil(cols / 128)] (a fused expert tensor `X.gate_up_proj` gets
// `X.gate_up_proj_scale_inv`, its leading expert dimension kept). A scale is split by tensor and
// expert parallelism as its weight is, so each rank holds the scales of its own blocks; a split
// that cuts a block is refused.
//
// MXFP4 (WeightFormat::mxfp4), as gpt-oss ships its experts and transformers' Mxfp4GptOssExperts
// loads them: each fused expert matrix `X` [E, in, out] becomes `X_blocks` [E, out, in / 32, 16]
// (two FP4 E2M1 values a byte, 32 values of one row to a block) and `X_scales` [E, out, in / 32]
// (one E8M0 exponent a block), both U8; the experts' biases and every other tensor stay in the
// state's weight dtype. TP cuts `out` (gate_up) or `in` (down) as it cuts the unquantized
// matrix; a cut of `in` that is not whole 32-value blocks is refused.

#include <cstdint>
#include <string>
#include <string_view>

#include "workloads/parallel_spec.hpp"
#include "workloads/tensor_catalog.hpp"

namespace ckpt::workloads {

inline constexpr std::int64_t kFp8BlockSize = 128;
inline constexpr std::int64_t kMxfp4BlockValues = 32;  // values sharing one E8M0 scale
inline constexpr std::int64_t kMxfp4BlockBytes = kMxfp4BlockValues / 2;

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

// Stores the experts of a gpt-oss catalog in MXFP4. Throws SpecError (key "weights") for a model
// without gpt-oss's fused experts or an expert matrix whose input is not whole 32-value blocks.
// The state's scope is checked first: a full training state's catalog has no fused experts.
void quantize_mxfp4_experts(TensorCatalog& catalog, const ModelSpec& model, const StateSpec& state);

// Checks an MXFP4 catalog against the parallelism: no TP split of an expert matrix's input that
// cuts a 32-value block.
void validate_mxfp4_experts(const TensorCatalog& catalog, const ParallelSpec& parallel);

}  // namespace ckpt::workloads
