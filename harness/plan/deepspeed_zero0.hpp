#pragma once

#include <cstdint>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// DeepSpeed's checkpoint without ZeRO (strategy.layout = "deepspeed", parallel.zero = 0) as
// DeepSpeed 0.19.8 writes it with bf16: DP rank 0 of each model-parallel rank saves
// mp_rank_{mp:02}_model_states.pt holding the module's weights (each its own storage) and the
// optimizer's state beside them (per weight Adam's step, exp_avg and exp_avg_sq, and the fp32
// copies in fp32_groups); no other file but `latest`.
//
// Whether the case's files are these: the deepspeed layout, one file per rank, ZeRO 0, no
// pipeline or expert parallelism, the full state with master weights and exact sizing.
bool deepspeed_zero0_files(const Case& c, const workloads::Layout& layout);

// The file's size: torch.save's archive around a pickle counted op by op (per weight its
// tensor, per module its version, per weight its Adam state and fp32 copy), with constants read
// off DeepSpeed 0.19.8's files for the rest (tests/data/deepspeed/zero012_files.jsonl).
std::uint64_t deepspeed_zero0_model_states_bytes(const workloads::Layout& layout,
                                                 std::int64_t rank);

// The bytes of its storages alone: the weights, and per weight the step, the moments and the
// master copy.
std::uint64_t deepspeed_zero0_model_states_data_bytes(const workloads::Layout& layout,
                                                      std::int64_t rank);

}  // namespace ckpt::harness
