#pragma once

// Private to harness/run: strategy.selective_every across a run's checkpoints. Each checkpoint
// writes the pieces due in the layer rotation, and every piece without a kept copy (the first
// checkpoint, or after an untimed one was removed); its manifest lists the others where their
// newest copy lies (an earlier checkpoint of this run, which retire keeps while it is needed).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/comm/comm.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

class SelectiveChain {
 public:
  explicit SelectiveChain(const Case& c) : c_(c) {}

  bool enabled() const { return c_.selective.enabled(); }
  // Before checkpoint `turn` (the run's iteration) into `dir`: of `full` (the logical plans, with
  // their shards' `checksums`), the plans of the pieces this checkpoint writes.
  void choose(const std::vector<RankPlan>& full,
              const std::vector<std::vector<std::uint64_t>>& checksums, std::int64_t turn,
              const std::filesystem::path& dir);
  const std::vector<RankPlan>& plans() const { return plans_; }
  const std::vector<std::vector<std::uint64_t>>& checksums() const { return checksums_; }
  // This process's pieces the checkpoint does not write, as earlier checkpoints hold them.
  const std::vector<ManifestTensor>& carried() const { return carried_; }
  // Collective: the directory names of the earlier checkpoints every process's carried pieces lie
  // in, on process 0 (empty on the others).
  std::set<std::string> needed(Comm& comm) const;
  // After the commit of checkpoint `dir`: when it stays (`kept`), the newest copies of the pieces
  // it wrote lie in it; else those pieces have no kept copy, and the next checkpoint writes them.
  void settle(const std::filesystem::path& dir, bool kept);

 private:
  const Case& c_;
  // Per plan and shard of the full plans: where its newest kept copy lies (its manifest entry).
  std::vector<std::vector<std::optional<ManifestTensor>>> newest_;
  std::vector<std::vector<std::size_t>> chosen_;  // per plan: the shards plans_ writes
  std::vector<RankPlan> plans_;
  std::vector<std::vector<std::uint64_t>> checksums_;
  std::vector<ManifestTensor> carried_;
};

}  // namespace ckpt::harness
