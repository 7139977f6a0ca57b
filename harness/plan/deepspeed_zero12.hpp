#pragma once

#include <cstdint>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// DeepSpeed's checkpoint under ZeRO stages 1 and 2 (strategy.layout = "deepspeed") as DeepSpeed
// 0.19.8 writes it with bf16: DP rank 0 of each model-parallel rank saves the module's weights in
// mp_rank_{mp:02}_model_states.pt, and every DP rank its partition of the fp32 master weights and
// Adam's moments in bf16_zero_pp_rank_{dp}_mp_rank_{mp:02}_optim_states.pt.
//
// Whether the case's files are these: the deepspeed layout, one file per rank, ZeRO 1 or 2,
// no pipeline or expert parallelism, the full state with master weights and exact sizing.
bool deepspeed_zero12_files(const Case& c, const workloads::Layout& layout);

// Elements of the flat bf16 buffer that holds a model-parallel rank's weights: DeepSpeed
// flattens them in module order and pads the end to a multiple of 2 × DP
// (stage_1_and_2.py: nccl_start_alignment_factor), so that every DP rank owns
// flat / DP elements of it. The weights are views into it, so torch.save writes the whole buffer.
std::int64_t deepspeed_zero12_flat_elements(const workloads::Layout& layout, std::int64_t rank);

// mp_rank_{mp:02}_model_states.pt: torch.save's archive of the flat buffer around a pickle
// counted op by op (per tensor its name, storage offset, size and stride; per module its
// version; param_shapes), the rest as DeepSpeed 0.19.8 writes it with the measuring script's
// ds_config (tests/data/deepspeed/zero012_files.jsonl).
std::uint64_t deepspeed_zero12_model_states_bytes(const workloads::Layout& layout,
                                                  std::int64_t rank);

// bf16_zero_pp_rank_{dp}_mp_rank_{mp:02}_optim_states.pt: the Adam step, exp_avg and exp_avg_sq
// of the rank's partition, then the fp32 partition, around a pickle counted op by op (per
// tensor whose elements the partition holds its name and fragment, per tensor of the group a
// padding entry).
std::uint64_t deepspeed_zero12_optimizer_file_bytes(const workloads::Layout& layout,
                                                    std::int64_t rank);

// The bytes of those files' tensors (the storages torch.save writes, padding included), without
// the archive and the pickle around them.
std::uint64_t deepspeed_zero12_model_states_data_bytes(const workloads::Layout& layout,
                                                       std::int64_t rank);
std::uint64_t deepspeed_zero12_optimizer_data_bytes(const workloads::Layout& layout,
                                                    std::int64_t rank);

}  // namespace ckpt::harness
