#include "harness/checkpoint/checkpoint_commit.hpp"

#include <fmt/format.h>

#include <new>

#include "harness/checkpoint/checkpoint_store.hpp"
#include "harness/checkpoint/dcp_metadata.hpp"
#include "harness/checkpoint/manifest.hpp"
#include "harness/checkpoint/safetensors_index.hpp"
#include "harness/checkpoint/target_check.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/plan/safetensors_plan.hpp"

namespace ckpt::harness {
namespace {

namespace fs = std::filesystem;

void put_back(CheckpointStore& store, const fs::path& path,
              const std::optional<std::string>& text) noexcept {
  try {
    if (text) {
      store.write_text(path, *text);
    } else {
      store.remove_text(path);
    }
  } catch (...) {  // best effort: the failure itself is what the run reports
  }
}

// Names `dir` (checkpoint number `step`) `latest`; on failure the earlier pointers are put back:
// `latest` must never name a checkpoint that is then removed.
void record_latest_or_put_back(CheckpointStore& store, const Case& c, const fs::path& dir,
                               std::int64_t step) {
  const fs::path latest = case_directory(c) / "latest";
  const fs::path iteration = case_directory(c) / "latest_checkpointed_iteration.txt";
  const std::optional<std::string> latest_before = store.read_text(latest),
                                   iteration_before = store.read_text(iteration);
  try {
    record_latest_checkpoint(store, c, dir, step);
  } catch (...) {
    put_back(store, latest, latest_before);
    put_back(store, iteration, iteration_before);
    throw;
  }
}

// Process 0's part, once every process's entries arrived.
void commit_files(CheckpointStore& store, const Case& c, const fs::path& dir,
                  const CommitRequest& request, const std::vector<std::string>& pieces,
                  CommitTimes& times) {
  std::vector<ManifestTensor> tensors;
  for (const std::string& piece : pieces) {
    std::vector<ManifestTensor> entries = parse_manifest_tensors(piece);
    tensors.insert(tensors.end(), std::make_move_iterator(entries.begin()),
                   std::make_move_iterator(entries.end()));
  }
  // DCP's coordinator writes .metadata only once every rank's data files are written, before
  // ckptbench's own manifest marks the checkpoint complete.
  times.metadata_seconds = commit_coordinator_files(store, c, dir, tensors);
  const auto start = Clock::now();
  // Hugging Face loaders find a sharded checkpoint's files through its index.
  const bool weights_only = c.state.scope == workloads::StateScope::weights;
  if (c.format == CheckpointFormat::safetensors &&
      writes_safetensors_index(tensors, weights_only)) {
    store.write_text(dir / kSafetensorsIndexName,
                     safetensors_index_text(safetensors_index(tensors, weights_only)));
  }
  store.write_text(
      dir / kManifestName,
      manifest_json(make_manifest(c, request.world_size, *request.ranks, std::move(tensors),
                                  request.step, request.training_iteration))
          .dump());
  // A kept run names it `latest` at once, so a process killed later leaves it restorable.
  if (request.name_latest) record_latest_or_put_back(store, c, dir, request.step);
  times.manifest_seconds = seconds_since(start);
}

}  // namespace

std::string commit_checkpoint(Comm& comm, CheckpointStore& store, const Case& c,
                              const fs::path& dir, const CommitRequest& request,
                              const std::vector<RankPlan>& plans,
                              const std::vector<std::vector<std::uint64_t>>& checksums,
                              CommitTimes* times) {
  std::vector<ManifestTensor> entries = manifest_tensors(plans, checksums);
  if (request.carried != nullptr)
    entries.insert(entries.end(), request.carried->begin(), request.carried->end());
  const std::vector<std::string> pieces = comm.gather(manifest_tensors_json(entries).dump());
  std::string problem;
  if (comm.rank() == 0) {
    CommitTimes mine;
    try {
      commit_files(store, c, dir, request, pieces, mine);
    } catch (const std::bad_alloc&) {
      problem = "out of memory (std::bad_alloc)";
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty())
      problem = fmt::format("checkpoint {}: manifest commit failed: {}", dir.string(), problem);
    if (times != nullptr) *times = mine;
  }
  return comm.broadcast(problem);
}

}  // namespace ckpt::harness
