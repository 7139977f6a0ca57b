#pragma once

// The emulated training loop and the checkpoint engines inside it. Each iteration computes
// (sleep or spin), then updates the state (every shard rewritten as the iteration's state,
// plans_at_iteration); a checkpoint is due after every checkpoint_every-th update and holds that
// iteration's state. The engine decides when the bytes move: sync (inline), async (snapshot into
// the host pool, background flush), lazy (the snapshot copy itself in the background, waited
// for before the next update) or tiered (as async; the flush goes to the memory tier with
// tiers.memory, the node-local tier, the clique's peers and, every K-th checkpoint, the backend). A
// checkpoint exists once `commit` ran, after every process's flush finished. Every process runs the
// same loop: collective calls (commit polls, barriers) come in the same order everywhere, from the
// calling thread only.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/comm/comm.hpp"
#include "harness/engine/flush_codec.hpp"
#include "harness/engine/tier_copies.hpp"
#include "harness/exec/dp_gather.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/memory/data_pattern_kind.hpp"
#include "harness/memory/gpu_load.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/results/training_summary.hpp"
#include "harness/spec/engine_spec.hpp"

namespace ckpt::harness {

using Checksums = std::vector<std::vector<std::uint64_t>>;  // per rank plan, per shard

struct TrainingIo {
  Comm& comm;
  backends::Backend& backend;
  std::vector<RankPlan> plans;  // the process's ranks; paths under `planned_dir`
  std::filesystem::path planned_dir;
  ProcessBuffer& state;  // filled (iteration -1) and pre-touched
  DataPattern pattern = DataPattern::random;
  // Collective: claims the directory of the checkpoint of `iteration` (made exclusively, as every
  // checkpoint's step directory) into `dir`; returns the same problem everywhere, or "".
  std::function<std::string(std::int64_t iteration, std::filesystem::path& dir)> claim_dir;
  // Collective: records the checkpoint of `iteration` in `dir` as complete (manifest with its
  // checksums and training iteration); returns the same problem everywhere, or "".
  std::function<std::string(const std::filesystem::path& dir, std::int64_t iteration,
                            const Checksums& sums)>
      commit;
  // Collective, optional: after checkpoint `dir` was committed, what the harness observes of it
  // outside the checkpoint's times (another process looking for it). Made once per committed
  // checkpoint, where no stall or time to durable counts it: a sync loop's after it resumed, a
  // background commit's after its end (a single process's on the flush thread, right after its
  // commit there).
  std::function<void(const std::filesystem::path& dir)> observe_commit;
  // Collective: removes directory `dir` of a checkpoint that failed after claim_dir (never
  // committed; no process writes into it any more) and says what became of it, for the error.
  // Empty: the directory stays.
  std::function<std::string(const std::filesystem::path& dir)> discard;
  const std::atomic<bool>* interrupted =
      nullptr;                  // SIGINT/SIGTERM: finish the in-flight flush, stop
  GpuLoad* gpu_load = nullptr;  // training.compute = "gpu": the kernel compute runs (required then)
  // Megatron's gathered distributed optimizer (engine sync only; case checks refuse async/lazy):
  // each update fills only the shards this process's ranks hold plus the gather's sources, and
  // every checkpoint gathers the other DP ranks' shards into `state` before its write.
  DpGather* gather = nullptr;
  // engine.name = "tiered": the nodes, cliques and local tiers (required then).
  const TierSetup* tiers = nullptr;
  // strategy.compression (sync, async and lazy with a whole pool): each checkpoint is written as
  // the frames this codec makes of it, and `commit` records its stored() plans. Null: raw bytes.
  FlushCodec* codec = nullptr;
  // strategy.selective_every, partial_experts, delta_every (sync, async and lazy with a whole
  // pool): of the state at the checkpoint of `iteration` in `dir` (its pieces' checksums `sums`),
  // the plans that checkpoint writes: the pieces due in the rotation, or the runs changed since
  // the base, from the same buffer places as `plans`; `commit` then records every other piece
  // where an earlier checkpoint holds it. Called by the loop's thread, once per checkpoint, after
  // the previous one was committed; the plans stay valid until the next call. Unset: `plans`.
  using Reduce = std::function<const std::vector<RankPlan>&(
      std::int64_t iteration, const std::filesystem::path& dir, const Checksums& sums)>;
  Reduce reduce;
};

// Test hooks that break the engine on purpose (verification must then fail).
struct EngineHooks {
  // async: copy the first half of the state, run the next iteration's update, copy the rest: a
  // snapshot mixing two iterations under the first one's name.
  bool tear_snapshot = false;
  // Process `throw_process` throws std::bad_alloc right after the directory of the checkpoint of
  // iteration `throw_after_claim` was claimed (-1: never): one process's failure between
  // collectives, which every process must see and clean up after.
  std::int64_t throw_after_claim = -1;
  int throw_process = 0;
};

// Runs the loop. Throws SetupError-like std::runtime_error only for setup problems found before
// any I/O (the pool); I/O problems come back in TrainingSummary::error, and so does an exception
// of the loop (std::bad_alloc). One process's exception between collectives (the update's fill, a
// checkpoint's preparation) is agreed on at the next agreement point (before each checkpoint,
// after its directory is claimed, at the loop's end), so every process fails that checkpoint
// together and its directory is discarded; only an exception inside a collective, where other
// processes may wait, is rethrown (with others) once the flush thread was joined. A checkpoint
// that fails has its directory discarded, so no failed checkpoint is left behind.
TrainingSummary run_training(const TrainingSpec& training, const EngineSpec& engine, TrainingIo& io,
                             const EngineHooks& hooks = {});

}  // namespace ckpt::harness
