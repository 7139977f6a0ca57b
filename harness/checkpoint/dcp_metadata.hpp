#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// DCP's coordinator file: torch.distributed.checkpoint's save gathers every rank's
// write results, and rank 0 writes the pickled Metadata to `.metadata.tmp`, fsyncs it and
// renames it to `.metadata` (filesystem.py: FileSystemWriter.finish) after every rank's
// data files are written.
inline constexpr const char* kDcpMetadataName = ".metadata";

// Whether the case writes `.metadata` (strategy.layout = "dcp" or "megatron_dist" with
// file_per_rank, the files DCP itself writes; never beside safetensors files).
bool writes_dcp_metadata(const Case& c);

// A file process 0 writes once every process's data files are written.
struct CoordinatorFile {
  std::string name;  // in the checkpoint directory
  std::string text;  // its bytes
};

// The coordinator's files of the case's layout for these manifest items: `.metadata` (dcp,
// megatron_dist) and Megatron's `metadata.json` ({"sharded_backend": "torch_dist", ...},
// dist_checkpointing/core.py: save_config) and `common.pt` (the non-sharded state: a stand-in
// of megatron_common_pt_bytes); none for the other layouts.
// The items .metadata lists: `items`, and under per-tensor ZeRO-3 sharding each of their ranks'
// empty chunks (Layout::empty_chunks), which hold no bytes and so no manifest entry.
std::vector<ManifestTensor> with_empty_chunks(const Case& c,
                                              const std::vector<ManifestTensor>& items);

std::vector<CoordinatorFile> coordinator_files(const Case& c,
                                               const std::vector<ManifestTensor>& items);

// Process 0, once every process's data files of the checkpoint in `dir` are written and before
// ckptbench's manifest commits it: the case's coordinator files for these manifest items
// (coordinator_files, each written whole into `store`). Returns the seconds they took (0
// when the layout has none). The harness's write iterations and the [training] engines' commit
// both call it.
double commit_coordinator_files(CheckpointStore& store, const Case& c,
                                const std::filesystem::path& dir,
                                const std::vector<ManifestTensor>& items);

// Size of the pickled Metadata of strategy.layout = "dcp" for these manifest items (one per
// written shard: its "name", "state", "rank", "global_shape"), with fqn = "state/name", fitted
// to the .metadata torch.distributed.checkpoint 2.15 writes (every tensor sharded on dim 0 over
// 1, 2, 4 and 8 processes, 21 and 75 tensors: within 0.2 %):
//     550 B                                      Metadata, its classes, the first memo entries
//   + per tensor:          len(fqn) + 180 + 10·ndim   TensorStorageMetadata, TensorProperties,
//                                                 size, its first chunk and storage_data entry
//   + per further chunk:   len(fqn) + 113 + 6·ndim    ChunkStorageMetadata and the storage_data
//                                                 entry: MetadataIndex, _StorageInfo
//   + per tensor, when more than one rank writes: 73   each rank's plan is gathered, so its
//                                                 names and sizes are objects of their own
// Exact are the counts of tensors and chunks.
std::uint64_t dcp_metadata_bytes(const std::vector<ManifestTensor>& items);
// The .metadata of strategy.layout = "megatron_dist", fitted to the files Megatron-core 0.16.1's
// torch_dist save writes on torch 2.15 (a GPT of 2, 8 and 32 layers, TP 1 at DP 1 to 8 and TP 2
// at DP 1 and 2; tests/data/dcp/megatron_metadata_sizes.jsonl: within 5 %). Its tensors are
// Megatron's keys: a name without its numbers (the layers, and experts, of a name are one tensor
// whose chunks they are), the optimizer's states "optimizer.state.<state>.<key>":
//     490 B                                   Metadata, its classes, the empty plans
//   + per tensor:            len(key) + 56     TensorStorageMetadata, TensorProperties, size
//   + per chunk:             len(key) + 233    ChunkStorageMetadata, MetadataIndex, _StorageInfo
//                                              and the WriteItem of its process's plan
//   + per further process writing a chunk of the tensor: 116   that plan's own properties
//                                              and size of the tensor (all_local_plans)
// Exact are the counts of tensors, chunks and writers; the dimensions are not counted (the
// measured tensors have 2 and 3, with the layer axis).
std::uint64_t megatron_dist_metadata_bytes(const std::vector<ManifestTensor>& items);

}  // namespace ckpt::harness
