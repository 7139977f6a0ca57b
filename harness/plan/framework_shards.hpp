#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// The shards modeled `rank` writes under the case's directory layout. The layout writes every
// element once (dcp, as DCP deduplicates replicas); the legacy framework formats differ:
//  - megatron and deepspeed save TP-replicated tensors (norms, row-parallel biases, routers)
//    on every TP rank: a rank with tp > 0 also writes TP rank 0's copies (same bytes);
//  - megatron with the distributed optimizer (ZeRO >= 1) gathers the DP shards of each
//    (tp, pp, ep) group onto its first DP rank, which writes model_optim_rng.pt and
//    distrib_optim.pt; the other DP ranks write nothing (megatron_optimizer = per_dp: each DP
//    rank keeps its optimizer shards, in mp_rank_TT_PPP_DDD/optim.pt);
//  - deepspeed under ZeRO-3 (deepspeed_zero3_files) writes no weights: the optimizer file's
//    fp32 partition is DeepSpeed's only copy of them;
//  - megatron_dist (torch_dist, fully parallel save) spreads the DP-replicated shards over the
//    DP group by size, each written once.
// `holders` (when given) receives, per written shard, the modeled rank that holds it in memory
// before the checkpoint: `rank` itself, or for a gathered shard the DP rank it comes from.
std::vector<workloads::Shard> written_shards(const workloads::Layout& layout, const Case& c,
                                             std::int64_t rank,
                                             std::vector<std::int64_t>* holders = nullptr);

// Whether the case gathers the distributed optimizer onto DP rank 0 of each (tp, pp, ep) group
// (strategy.layout = "megatron", ZeRO >= 1, DP > 1, megatron_optimizer = "gathered").
bool gathers_distributed_optimizer(const Case& c, const workloads::Layout& layout);

// The DP rank 0 (root) that gathers `rank`'s shards, or `rank` itself when it gathers none.
std::int64_t gather_root(const workloads::Layout& layout, const Case& c, std::int64_t rank);

// Whether `s` is a shard of a TP-replicated tensor (a norm, a row-parallel bias, a router): with
// tp > 1 every split tensor is cut along one dim, so only a replicated one spans its global shape.
bool tp_replicated(const workloads::Shard& s);

// Whether the case's layout writes TP-replicated tensors on every TP rank.
bool replicates_across_tp(const Case& c);

// The weights one model-parallel rank's module holds, whole on its TP slice, in module order (what
// DeepSpeed and Megatron pickle beside their tensors): the layout of the same job without data
// parallelism, where a TP rank above 0 also holds TP rank 0's TP-replicated tensors (the layout
// gives those to TP rank 0 alone).
std::vector<workloads::Shard> model_parallel_weights(const workloads::Layout& layout,
                                                     std::int64_t rank);

}  // namespace ckpt::harness
