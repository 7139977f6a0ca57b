#pragma once

#include <cstdint>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// DeepSpeed's ZeRO-3 checkpoint (strategy.layout = "deepspeed", parallel.zero = 3) as DeepSpeed
// writes it. The bf16 weights are not saved: every parameter is partitioned, so each rank's
// zero_pp_rank_{dp}_mp_rank_{mp:02}_model_states.pt holds engine state only (an empty
// placeholder per parameter, param_shapes, ds_config, counters), and the weights live as the
// fp32 partition in bf16_zero_pp_rank_{dp}_mp_rank_{mp:02}_optim_states.pt beside exp_avg and
// exp_avg_sq of the same flat partition.
//
// Whether a case's layout gets these files: the spec's deepspeed_zero3_files over the layout's
// parallelism and state.
bool deepspeed_zero3_files(const Case& c, const workloads::Layout& layout);

// Elements of the flat fp32 partition every DP rank of `rank`'s model-parallel group holds:
// DeepSpeed partitions each parameter on its own, padded to a multiple of the DP size
// (partition_parameters.py: _padding_size), so a rank holds the sum of ceil(numel / dp) over
// the group's tensors (TP-local, TP-replicated ones included).
std::int64_t deepspeed_zero3_partition_elements(const workloads::Layout& layout, std::int64_t rank);

// The optimizer file's size: torch.save's archive (its zip layout exact) of the Adam step,
// exp_avg and exp_avg_sq per sub-group (parameters taken in order until they reach 10^9
// partition elements, DeepSpeed's default sub_group_size) in the optimizer dtype and the flat
// partitions in the master dtype, around a pickle counted op by op with constants read off
// DeepSpeed 0.19.8's files (one parameter group, the measuring script's ds_config).
std::uint64_t deepspeed_zero3_optimizer_file_bytes(const workloads::Layout& layout,
                                                   std::int64_t rank);

// The bytes of the optimizer file's tensors (the storages torch.save writes: per sub-group the
// step, exp_avg, exp_avg_sq and the flat partition, DeepSpeed's padding included), without the
// archive and the pickle around them.
std::uint64_t deepspeed_zero3_optimizer_data_bytes(const workloads::Layout& layout,
                                                   std::int64_t rank);

// The model_states file's size: torch.save's archive of one empty storage per parameter around
// a pickle counted op by op: per parameter its placeholder and its param_shapes entry (the name
// twice, the dimensions as pickled ints), per module of the smallest module tree holding the
// names its version entry, and the rest as DeepSpeed 0.19.8 writes it.
std::uint64_t deepspeed_zero3_model_states_bytes(const workloads::Layout& layout,
                                                 std::int64_t rank);

// The sizes of the recovery scripts DeepSpeed 0.19.8 copies beside `latest`
// (deepspeed_recovery_scripts); ckptbench writes stand-ins of these sizes.
inline constexpr std::uint64_t kZeroToFp32ScriptBytes = 38580;
inline constexpr std::uint64_t kZeroToTorchScriptBytes = 2490;

}  // namespace ckpt::harness
