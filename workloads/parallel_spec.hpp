#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "workloads/dtype.hpp"

namespace ckpt::workloads {

// How ZeRO-3 partitions the state over the DP ranks. `flat`: DeepSpeed's and FSDP1's flat
// parameter, one buffer of the rank's tensors cut into DP ranges, so only tensors on a range
// boundary split. `per_tensor`: FSDP2's, every tensor cut on dim 0 into DP chunks with
// torch.chunk's rule (chunks of ceil(rows / DP) rows, the last shorter, ranks past the end
// empty), which DCP saves as one item per (tensor, rank). Under TP each rank's TP slice is cut,
// the vocabulary is not padded, and a chunk every TP rank holds is saved by one of them
// (Layout::for_each_piece).
enum class ZeroSharding { flat, per_tensor };

// How training spreads the model over ranks. Rank order follows Megatron-core's default
// "tp-cp-ep-dp-pp": tensor-parallel rank fastest, then data-parallel (which contains the
// expert-parallel index), then pipeline stage.
struct ParallelSpec {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t ep = 1;  // divides dp; expert data-parallel size is dp / ep
  int zero_stage = 0;   // 0..3; Megatron's distributed optimizer ~ ZeRO-1
  ZeroSharding zero_sharding = ZeroSharding::flat;  // per_tensor needs zero_stage 3
  std::int64_t vocab_divisor = 128;        // Megatron: vocab padded to a multiple of divisor × tp
  std::int64_t pp_first_stage_layers = 0;  // 0: even split
  std::int64_t pp_last_stage_layers = 0;   // 0: even split

  std::int64_t world_size() const { return tp * pp * dp; }
  std::int64_t expert_dp() const { return dp / ep; }
};

// What a checkpoint holds. `weights`: what serving needs (HF names by default); `full`:
// training state — weights, fp32 master copy, Adam exp_avg and exp_avg_sq (Megatron names).
enum class StateScope { weights, full };
enum class Naming { megatron, hf };

// How checkpoint bytes are counted. `exact`: the tensors the framework really saves (padded
// vocabulary, norms once). `dlio`: DLIO's size formula, which MLPerf Storage v2.0 publishes
// (DlioSizing): other rank order, no padding, its own optimizer groups.
enum class Sizing { exact, dlio };

enum class StateKind { weight, master, exp_avg, exp_avg_sq };

// How the weights are stored. `unquantized`: every weight in the state's weight dtype.
// `fp8_block`: as DeepSeek-V3's and transformers' fine-grained FP8 checkpoints, each linear
// layer's weight in FP8 (E4M3, 1 byte) with a float32 `weight_scale_inv` of one scale per
// 128 x 128 block beside it; embeddings, norms, routers and the output layer stay unquantized.
// `mxfp4`: as gpt-oss ships its experts, each fused expert matrix as `X_blocks` (FP4 E2M1, two
// values a byte, blocks of 32 values) and `X_scales` (E8M0, one per block); every other tensor
// unquantized.
enum class WeightFormat { unquantized, fp8_block, mxfp4 };
inline constexpr std::array kWeightFormats{WeightFormat::unquantized, WeightFormat::fp8_block,
                                           WeightFormat::mxfp4};

struct StateSpec {
  StateScope scope = StateScope::full;
  Dtype weight_dtype = Dtype::bf16;
  std::optional<Dtype> master_dtype = Dtype::fp32;  // nullopt: no master copy (pure fp32 training)
  Dtype optimizer_dtype = Dtype::fp32;
  std::optional<Naming> naming;  // default: hf for weights, megatron for full
  Sizing sizing = Sizing::exact;
  WeightFormat weights = WeightFormat::unquantized;  // model.weights

  // The dtype a state kind is stored in (master: fp32 when there is no master copy's own dtype).
  Dtype dtype_of(StateKind kind) const;

  Naming effective_naming() const {
    return naming.value_or(scope == StateScope::weights ? Naming::hf : Naming::megatron);
  }
};

std::string_view state_kind_name(StateKind kind);
std::string_view state_scope_name(StateScope scope);
std::string_view naming_name(Naming naming);
std::string_view sizing_name(Sizing sizing);
std::string_view weight_format_name(WeightFormat format);
std::string_view zero_sharding_name(ZeroSharding sharding);

}  // namespace ckpt::workloads
