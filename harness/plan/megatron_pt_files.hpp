#pragma once

#include <cstdint>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// Megatron-LM's legacy checkpoint files (--ckpt-format torch; strategy.layout = "megatron") as
// Megatron-LM core_v0.16.1 torch.saves them (tests/data/megatron/megatron_pt_files.jsonl, from
// measure_megatron_pt.py):
//  - mp_rank_TT[_PPP]/model_optim_rng.pt: {args, checkpoint_version, iteration, model (the bf16
//    weights, an _extra_state per linear module, per module its version), optimizer,
//    opt_param_scheduler, rerun_state_machine, rng_state (the CPU generator's 5,056-byte state,
//    CUDA's and the tracker's 16 bytes each), num_floating_point_operations_so_far}. Without the
//    distributed optimizer the optimizer holds per weight Adam's step, exp_avg and exp_avg_sq
//    and the fp32 copy (torch's AdamW; decayed weights first, then the norms);
//  - distrib_optim.pt (distributed optimizer, DP rank 0): the fp32 master weights, exp_avg and
//    exp_avg_sq of the (TP, PP) rank's whole buffer, unpadded, and its element count.
// Exact: the tensors, torch.save's archive, distrib_optim.pt's pickle. Estimated: the args
// Namespace (that of the measured jobs, 21,767 B pickled: other arguments pickle to other
// sizes), Python's generator state (that of Megatron's default seed: its size varies by some
// tens of bytes with the generator's position) and the optimizer's parameter groups; the module
// tree is megatron-core's GPT with the local layer spec (Transformer Engine's modules add their
// own extra state).
//
// Whether the case's files are these: the megatron layout, one file per rank, no expert
// parallelism (each expert rank's files hold its experts alone), the full state with master
// weights, exact sizing and the gathered distributed optimizer format.
bool megatron_pt_files(const Case& c, const workloads::Layout& layout);

// A file's size as torch.save writes it, and the bytes of its storages alone.
struct PtFileBytes {
  std::uint64_t whole = 0;
  std::uint64_t data = 0;
};

// model_optim_rng.pt of modeled `rank` (DP rank 0 of its (TP, PP) rank writes it); with the
// optimizer inside unless the case gathers the distributed optimizer.
PtFileBytes megatron_model_optim_rng_bytes(const workloads::Layout& layout, const Case& c,
                                           std::int64_t rank);

// distrib_optim.pt of modeled `rank`.
PtFileBytes megatron_distrib_optim_bytes(const workloads::Layout& layout, std::int64_t rank);

// common.pt of strategy.layout = "megatron_dist" (Megatron-LM's torch_dist save with the
// distributed optimizer, dp_reshardable): what megatron-core's dist_checkpointing.save leaves
// unsharded, torch.saved by process 0: the args, counters, the scheduler, the optimizer's
// sharding type and the content metadata, no tensor (the RNG states and the optimizer's groups
// are sharded objects). Estimated as model_optim_rng.pt's args are; the rest exact for these
// keys.
std::uint64_t megatron_common_pt_bytes(const workloads::ModelSpec& model);

}  // namespace ckpt::harness
