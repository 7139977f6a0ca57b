#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/spec/case.hpp"
#include "workloads/layout.hpp"

namespace ckpt::harness {

// The file (relative to the checkpoint directory) that modeled `rank` writes `shard` into,
// mirroring the case's directory layout:
//   file_per_rank  dcp: __{rank}_0.distcp
//                  megatron: mp_rank_{tp:02}[_{pp:03}][_{ep:03}]/model_optim_rng.pt (weights; and
//                            the optimizer without the distributed optimizer), .../distrib_optim.pt
//                            (optimizer, ZeRO >= 1; both from DP rank 0, see written_shards) or
//                            mp_rank_..._{dp:03}/optim.pt (megatron_optimizer = per_dp)
//                  deepspeed: mp_rank_{mp:02}_model_states.pt (weights; zero_pp_rank_{dp}_... under
//                            expert parallelism, and under ZeRO-3 where deepspeed_zero3_files
//                            does not apply; under PP > 1 one file per layer and TP rank,
//                            layer_{LL:02}-model_{tp:02}-model_states.pt) and
//                            bf16_zero_pp_rank_{dp}_mp_rank_{mp:02}_optim_states.pt (optimizer;
//                            without ZeRO, PP and EP in mp_rank_{mp:02}_model_states.pt, as
//                            DeepSpeed's mixed-precision optimizer saves it with the module)
//   file_per_tensor  r{rank:05}/{tensor name}.bin
//   file_per_node    node_{node:04}.bin
//   shared_file      checkpoint.bin
std::string shard_file(const Case& c, const workloads::Layout& layout, std::int64_t rank,
                       const workloads::Shard& shard);

// The files of all of `rank`'s shards, in order: shard_file's, except that megatron_dist
// (file_per_rank) splits them over c.writer_threads files __{rank}_{n}.distcp as Megatron's
// writer does (filesystem_async.py: _split_by_size_and_type: largest first, each into the
// bin with the fewest bytes, lowest bin on ties).
std::vector<std::string> shard_files(const Case& c, const workloads::Layout& layout,
                                     std::int64_t rank,
                                     const std::vector<workloads::Shard>& shards);

// DeepSpeed's per-rank files (engine.py: _get_zero_ckpt_name, _get_ckpt_name): the optimizer
// partition of DP rank `dp` of model-parallel rank `mp`, and its engine state under ZeRO-3 or
// expert parallelism; the module's weights of model-parallel rank `mp` (DP rank 0's).
std::string deepspeed_optimizer_file(std::int64_t dp, std::int64_t mp);
std::string deepspeed_model_states(std::int64_t mp);
std::string deepspeed_zero_model_states(std::int64_t dp, std::int64_t mp);

// DeepSpeed's files of engine state, which hold no tensor of the layout. Under ZeRO-3
// (deepspeed_zero3_files) every rank writes zero_pp_rank_{dp}_mp_rank_{mp:02}_model_states.pt,
// sized by deepspeed_zero3_model_states_bytes. Under PP > 1 (file_per_rank): beside the layer
// files, DP rank 0 of each model-parallel rank (mp = pp · tp + tp, PipelineParallelGrid's order)
// saves the engine's own state in mp_rank_{mp:02}_model_states.pt (engine.py: _save_checkpoint
// with module = None, as PipelineEngine saved the layers; optimizer None under ZeRO). Its
// size is an estimate: kEngineStateBaseBytes for the torch.save container, ds_config, the
// scheduler and counters, plus per weight tensor of the rank len(name) + 32 + 4 · ndim for
// its entry in param_shapes (name → torch.Size) and buffer_names.
struct EngineStateFile {
  std::string file;  // relative to the checkpoint directory
  std::uint64_t bytes = 0;
};
std::optional<EngineStateFile> deepspeed_engine_state_file(const Case& c,
                                                           const workloads::Layout& layout,
                                                           std::int64_t rank);
inline constexpr std::uint64_t kEngineStateBaseBytes = 4096;

// The recovery scripts DeepSpeed's process 0 copies beside `latest` with every ZeRO save
// (engine.py: _copy_recovery_script), relative to the checkpoint directory, at the sizes
// DeepSpeed 0.19.8 ships them; none but for rank 0 of deepspeed_zero3_files' and
// deepspeed_zero12_files' cases.
std::vector<EngineStateFile> deepspeed_recovery_scripts(const Case& c,
                                                        const workloads::Layout& layout,
                                                        std::int64_t rank);

// Whether several modeled ranks write into one file under this mapping.
bool mapping_shares_files(Mapping mapping);

}  // namespace ckpt::harness
