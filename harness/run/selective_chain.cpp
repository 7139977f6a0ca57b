#include "harness/run/selective_chain.hpp"

#include <sstream>

#include "harness/plan/selective_plan.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

void SelectiveChain::choose(const std::vector<RankPlan>& full,
                            const std::vector<std::vector<std::uint64_t>>& checksums,
                            std::int64_t turn, const fs::path& dir) {
  newest_.resize(full.size());
  chosen_.assign(full.size(), {});
  plans_.clear();
  checksums_.assign(full.size(), {});
  carried_.clear();
  for (std::size_t p = 0; p < full.size(); ++p) {
    const RankPlan& plan = full[p];
    newest_[p].resize(plan.shards.size());
    std::vector<bool> keep(plan.shards.size());
    for (std::size_t i = 0; i < plan.shards.size(); ++i) {
      const std::optional<ManifestTensor>& copy = newest_[p][i];
      keep[i] = !copy || selective_due(c_.selective, plan.shards[i].shard, turn);
      if (keep[i]) {
        chosen_[p].push_back(i);
        checksums_[p].push_back(checksums.at(p).at(i));
      } else {
        carried_.push_back(*copy);
      }
    }
    plans_.push_back(selective_plan(plan, keep, c_, dir));
  }
}

std::set<std::string> SelectiveChain::needed(Comm& comm) const {
  std::set<std::string> mine;
  for (const ManifestTensor& t : carried_) mine.insert(t.checkpoint);
  std::string text;
  for (const std::string& name : mine) text += name + "\n";
  std::set<std::string> out;
  for (const std::string& piece : comm.gather(text)) {
    std::istringstream lines(piece);
    for (std::string name; std::getline(lines, name);) out.insert(name);
  }
  return out;
}

void SelectiveChain::settle(const fs::path& dir, bool kept) {
  const std::vector<ManifestTensor> written = manifest_tensors(plans_, checksums_);
  std::size_t next = 0;
  for (std::size_t p = 0; p < chosen_.size(); ++p) {
    for (const std::size_t i : chosen_[p]) {
      std::optional<ManifestTensor>& copy = newest_[p][i];
      copy.reset();
      if (kept) {
        copy = written.at(next);
        copy->checkpoint = dir.filename().string();
      }
      ++next;
    }
  }
}

}  // namespace ckpt::harness
