#include "harness/run/selective_chain.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "harness/memory/checksum.hpp"
#include "harness/plan/delta_plan.hpp"
#include "harness/plan/selective_plan.hpp"

namespace ckpt::harness {

namespace fs = std::filesystem;

void SelectiveChain::choose(const std::vector<RankPlan>& full,
                            const std::vector<std::vector<std::uint64_t>>& checksums,
                            std::int64_t turn, std::int64_t step, const fs::path& dir,
                            const RunFrames* frames) {
  newest_.resize(full.size());
  chosen_.assign(full.size(), {});
  plans_.clear();
  checksums_.assign(full.size(), {});
  carried_.clear();
  step_ = step;
  base_ = c_.selective.delta() && !delta_due();
  run_work_ = CodecWork{};
  if (delta_due()) {
    choose_delta(full, checksums, step, dir, frames);
    return;
  }
  for (std::size_t p = 0; p < full.size(); ++p) {
    const RankPlan& plan = full[p];
    newest_[p].resize(plan.shards.size());
    std::vector<bool> keep(plan.shards.size());
    for (std::size_t i = 0; i < plan.shards.size(); ++i) {
      const std::optional<ManifestTensor>& copy = newest_[p][i];
      keep[i] = base_ || !copy || selective_due(c_.selective, plan.shards[i].shard, turn);
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

bool SelectiveChain::delta_due() const {
  return c_.selective.delta() && base_step_ != 0 && chain_ < c_.selective.delta_every;
}

void SelectiveChain::choose_delta(const std::vector<RankPlan>& full,
                                  const std::vector<std::vector<std::uint64_t>>& checksums,
                                  std::int64_t step, const fs::path& dir, const RunFrames* frames) {
  std::vector<std::vector<std::vector<DeltaRun>>> runs(full.size());
  for (std::size_t p = 0; p < full.size(); ++p) {
    const RankPlan& plan = full[p];
    runs[p].resize(plan.shards.size());
    for (std::size_t i = 0; i < plan.shards.size(); ++i) {
      if (plan.shards[i].updates.step != step)
        throw std::logic_error("delta chain: the state is not at the checkpoint's step");
      runs[p][i] = changed_runs(plan.shards[i], base_step_);
    }
    if (frames == nullptr) plans_.push_back(delta_plan(plan, runs[p], c_, dir));
  }
  if (frames != nullptr) frame_runs(full, runs, *frames);
  for (std::size_t p = 0; p < full.size(); ++p) {
    const RankPlan& plan = full[p];
    for (std::size_t i = 0; i < plan.shards.size(); ++i) {
      ManifestTensor entry = newest_.at(p).at(i).value();  // the base holds every piece
      entry.checksum = checksum_hex(checksums.at(p).at(i));
      entry.iteration.reset();  // with its runs over it, the piece is this checkpoint's state
      if (!runs[p][i].empty()) {
        entry.delta_file = plan.shards[i].file;
        entry.delta = std::move(runs[p][i]);
      }
      carried_.push_back(std::move(entry));
    }
  }
}

void SelectiveChain::frame_runs(const std::vector<RankPlan>& full,
                                std::vector<std::vector<std::vector<DeltaRun>>>& runs,
                                const RunFrames& frames) {
  std::vector<RankPlan> pieces;  // per plan: each run as a piece of its own
  for (std::size_t p = 0; p < full.size(); ++p) {
    RankPlan& out = pieces.emplace_back(emptied_plan(full[p]));
    std::set<std::string> files;
    for (std::size_t i = 0; i < full[p].shards.size(); ++i) {
      for (const DeltaRun& run : runs[p][i]) {
        PlacedShard piece = full[p].shards[i];
        piece.memory_offset += run.offset;
        piece.bytes = run.bytes;
        out.shards.push_back(std::move(piece));
        out.payload_bytes += run.bytes;
        files.insert(full[p].shards[i].file);
      }
    }
    // Only the files holding a run, in the logical plan's order (the stored plan's files).
    std::erase_if(out.io.files, [&files](const backends::FilePlan& f) {
      return std::none_of(files.begin(), files.end(),
                          [&f](const std::string& name) { return f.path.ends_with("/" + name); });
    });
  }
  const std::vector<RankPlan> bounds = bounded_stored_plans(pieces, c_);
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const std::uint64_t room = (p + 1 < frames.stored.ranks() ? frames.stored.offset(p + 1)
                                                              : frames.stored.memory().size()) -
                               frames.stored.offset(p);
    if (bounds[p].buffer_bytes > room)
      throw std::runtime_error(
          "strategy.compression with strategy.delta_every: the frames of rank " +
          std::to_string(full[p].rank) + "'s changed runs may take " +
          std::to_string(bounds[p].buffer_bytes) + " bytes, more than the " + std::to_string(room) +
          " its whole state's frames may; raise strategy.delta_block_bytes");
  }
  run_work_ = compress_plans(pieces, frames.raw, c_, plans_, frames.stored);
  for (std::size_t p = 0; p < full.size(); ++p) {
    std::size_t k = 0;
    for (std::vector<DeltaRun>& shard_runs : runs[p]) {
      for (DeltaRun& run : shard_runs) {
        const PlacedShard& framed = plans_.at(p).shards.at(k++);
        run.file_offset = framed.file_offset;
        run.stored_bytes = framed.stored_bytes;
      }
    }
    plans_[p].shards.clear();  // the manifest lists the pieces at their base, with these runs
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

void SelectiveChain::settle(const fs::path& dir, bool kept, std::optional<std::int64_t> iteration) {
  if (c_.selective.delta()) {
    if (base_) {
      base_step_ = kept ? step_ : 0;
      chain_ = 0;
    }
    ++chain_;
  }
  const std::vector<ManifestTensor> written = manifest_tensors(plans_, checksums_);
  std::size_t next = 0;
  for (std::size_t p = 0; p < chosen_.size(); ++p) {
    for (const std::size_t i : chosen_[p]) {
      std::optional<ManifestTensor>& copy = newest_[p][i];
      copy.reset();
      if (kept) {
        copy = written.at(next);
        copy->checkpoint = dir.filename().string();
        copy->iteration = iteration;
      }
      ++next;
    }
  }
}

void SelectiveChain::record(Comm& comm, const std::set<std::string>& needed, const fs::path& dir,
                            std::uint64_t full_bytes, std::optional<SelectiveSummary>& summary) {
  const std::string name = dir.filename().string();
  const auto count = static_cast<std::int64_t>(recorded_.size()) + 1;
  recorded_[name] = count;
  if (!summary)
    summary = SelectiveSummary{.every = c_.selective.every,
                               .experts = c_.selective.experts,
                               .full_bytes = full_bytes,
                               .delta_every = c_.selective.delta_every};
  std::uint64_t mine = 0;
  for (const RankPlan& p : plans_) mine += p.io.bytes();  // frames, when compressed
  summary->written_bytes.push_back(comm.sum(mine));
  const std::string oldest = comm.broadcast(needed.empty() ? name : *needed.begin());
  summary->oldest_needed.push_back(oldest);
  const auto known = recorded_.find(oldest);
  summary->chain_length.push_back(known == recorded_.end() ? 1 : count - known->second + 1);
}

}  // namespace ckpt::harness
