#pragma once

// Private to harness/run: strategy.selective_every (partial_experts, delta_every) across a run's
// checkpoints. Each checkpoint writes the pieces due in the layer rotation, and every piece
// without a kept copy (the first checkpoint, or after an untimed one was removed); its manifest
// lists the others where their newest copy lies (an earlier checkpoint of this run, which retire
// keeps while it is needed). delta_every: a full checkpoint (the base) when none is kept or the
// chain is N long, else of every piece the blocks changed since the base, the manifest listing
// each piece at the base with those runs.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/comm/comm.hpp"
#include "harness/exec/codec_plans.hpp"
#include "harness/exec/process_buffer.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/delta_plan.hpp"
#include "harness/results/case_result.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// strategy.compression with delta_every: the buffers a delta's changed runs are compressed from
// (the state) and into (the stored buffer, sized for the whole state's frames).
struct RunFrames {
  const ProcessBuffer& raw;
  const ProcessBuffer& stored;
};

class SelectiveChain {
 public:
  explicit SelectiveChain(const Case& c) : c_(c) {}

  bool enabled() const { return c_.selective.enabled(); }
  // Before checkpoint `turn` (the run's iteration) of `step` into `dir`: of `full` (the logical
  // plans, with their shards' `checksums`; delta: their bytes at `step`), the plans of the pieces
  // (runs) this checkpoint writes.
  // `frames` (strategy.compression): a delta's runs are written as their frames, each run
  // compressed on its own, packed back to back per file; the base as `full` gives it (the frames
  // of the whole state).
  void choose(const std::vector<RankPlan>& full,
              const std::vector<std::vector<std::uint64_t>>& checksums, std::int64_t turn,
              std::int64_t step, const std::filesystem::path& dir,
              const RunFrames* frames = nullptr);
  // delta_every: whether the next choose() makes a delta (not a base).
  bool delta_due() const;
  // The last delta's compression of its runs (zero without frames).
  const CodecWork& run_work() const { return run_work_; }
  const std::vector<RankPlan>& plans() const { return plans_; }
  const std::vector<std::vector<std::uint64_t>>& checksums() const { return checksums_; }
  // This process's pieces the checkpoint does not write, as earlier checkpoints hold them.
  const std::vector<ManifestTensor>& carried() const { return carried_; }
  // Collective: the directory names of the earlier checkpoints every process's carried pieces lie
  // in, on process 0 (empty on the others).
  std::set<std::string> needed(Comm& comm) const;
  // After the commit of checkpoint `dir`: when it stays (`kept`), the newest copies of the pieces
  // it wrote lie in it; else those pieces have no kept copy, and the next checkpoint writes them.
  // `iteration`: under [training], the iteration whose state it holds, which a later checkpoint
  // pointing at one of its pieces records (the loop updates every piece each iteration).
  void settle(const std::filesystem::path& dir, bool kept,
              std::optional<std::int64_t> iteration = std::nullopt);
  // Collective, after settle(dir) of a kept checkpoint (`needed`: what needed() said of it): its
  // figures appended to `summary`, made with `full_bytes` (a full checkpoint's) on the first call:
  // the bytes it wrote (every process's), the oldest checkpoint its restore needs and its chain
  // length (the checkpoints recorded from that one to it).
  void record(Comm& comm, const std::set<std::string>& needed, const std::filesystem::path& dir,
              std::uint64_t full_bytes, std::optional<SelectiveSummary>& summary);

 private:
  // delta_every: the base in full, or the runs changed since it.
  void choose_delta(const std::vector<RankPlan>& full,
                    const std::vector<std::vector<std::uint64_t>>& checksums, std::int64_t step,
                    const std::filesystem::path& dir, const RunFrames* frames);
  // plans_ as the frames of `runs` (per plan and shard of `full`), their file offsets and stored
  // bytes set in `runs`.
  void frame_runs(const std::vector<RankPlan>& full,
                  std::vector<std::vector<std::vector<DeltaRun>>>& runs, const RunFrames& frames);

  const Case& c_;
  // Per plan and shard of the full plans: where its newest kept copy lies (its manifest entry).
  std::vector<std::vector<std::optional<ManifestTensor>>> newest_;
  std::vector<std::vector<std::size_t>> chosen_;  // per plan: the shards plans_ writes
  std::vector<RankPlan> plans_;
  std::vector<std::vector<std::uint64_t>> checksums_;
  std::vector<ManifestTensor> carried_;
  // delta_every: the kept base's step (0: none kept), this checkpoint's, whether this one is a
  // base, and the checkpoints since the base, the base included.
  std::int64_t base_step_ = 0;
  std::int64_t step_ = 0;
  bool base_ = false;
  std::int64_t chain_ = 0;
  CodecWork run_work_;
  std::map<std::string, std::int64_t> recorded_;  // each recorded checkpoint's count, by name
};

}  // namespace ckpt::harness
