#pragma once

// The one commit of a checkpoint, for the harness's write iterations and every [training] engine
// alike: once every process's data files are written, process 0 writes the layout's coordinator
// files (DCP's .metadata, Megatron's metadata.json and common.pt), a safetensors checkpoint's
// model.safetensors.index.json, then the manifest — last, since a checkpoint is complete only once
// its manifest is written — and, when asked, names it the case's `latest` (DeepSpeed's pointer,
// Megatron's latest_checkpointed_iteration.txt).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/comm/comm.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// What decides a checkpoint's manifest besides its tensors.
struct CommitRequest {
  std::int64_t world_size = 1;
  const std::vector<std::int64_t>* ranks =
      nullptr;  // the modeled ranks the case writes (all processes')
  std::int64_t step = 0;
  std::optional<std::int64_t> training_iteration;  // [training]: the iteration whose state it holds
  bool name_latest =
      false;  // record it as the case's latest; on failure the earlier pointers are put back
  // strategy.selective_every: this process's pieces that earlier checkpoints hold (entries with
  // their `checkpoint`), listed beside the written ones; null: none.
  const std::vector<ManifestTensor>* carried = nullptr;
};

// Process 0's seconds: the coordinator files, then the rest (index, manifest, `latest`).
struct CommitTimes {
  double metadata_seconds = 0;
  double manifest_seconds = 0;
};

// Collective: every process sends its ranks' tensor entries (`plans` with their `checksums`) to
// process 0, which commits checkpoint `dir` as above into `store` (process 0's is used). Returns
// the same problem on every process, "checkpoint DIR: manifest commit failed: …", or "". `times`
// (process 0's) may be null.
std::string commit_checkpoint(Comm& comm, CheckpointStore& store, const Case& c,
                              const std::filesystem::path& dir, const CommitRequest& request,
                              const std::vector<RankPlan>& plans,
                              const std::vector<std::vector<std::uint64_t>>& checksums,
                              CommitTimes* times = nullptr);

}  // namespace ckpt::harness
