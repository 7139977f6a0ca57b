#include "harness/engine/flush_writes.hpp"

#include <fmt/format.h>

#include <optional>

#include "harness/exec/execute_plans.hpp"

namespace ckpt::harness {

FlushWrites write_whole(backends::Backend& backend, const FlushTarget& target) {
  std::vector<PlanCall> calls;
  for (std::size_t i = 0; i < target.plans.size(); ++i)
    calls.push_back(
        {&target.plans[i], target.memory[i], 0, fmt::format("rank {}", target.ranks[i])});
  const Execution done = execute_plans(backend, calls, true, nullptr, OnThrow::record);
  return {done.bytes, done.error.empty() ? "" : target.what + ": " + done.error, done.counters};
}

namespace {

// One modeled rank's plan, its chunks as the ring hands them over, through the files `writer`
// opens for it. Returns why the copy side stopped first, or "".
std::string write_rank_chunks(PlanExecutor& writer, ChunkRing& ring, const backends::IoPlan& plan,
                              const std::vector<StagedPart>& parts, const std::string& who) {
  // The rank's files open before its first chunk comes (a rank without bytes still creates them).
  static const StagedPart kNothing;
  if (!writer.call({.plan = &plan, .who = who, .part = &kNothing})) return "";
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const std::optional<backends::MemoryView> chunk = ring.front();
    if (!chunk) {
      writer.drop_files();  // a snapshot never whole: its files are not synced
      return fmt::format("{}: the snapshot copy stopped before chunk {} of {}", who, k + 1,
                         parts.size());
    }
    const bool ok = writer.call({.plan = &plan, .memory = *chunk, .who = who, .part = &parts[k]});
    ring.pop();
    if (!ok) break;
  }
  return "";
}

}  // namespace

FlushWrites write_through_ring(backends::Backend& backend, ChunkRing& ring,
                               const FlushTarget& target) {
  PlanExecutor writer(backend, true, {.on_throw = OnThrow::record, .opening = Opening::kept_open});
  std::string stopped;
  for (std::size_t i = 0; i < target.plans.size() && stopped.empty(); ++i) {
    stopped = write_rank_chunks(writer, ring, target.plans[i], target.parts[i],
                                fmt::format("rank {}", target.ranks[i]));
    if (!writer.close_files()) break;
  }
  const Execution done = writer.finish();
  FlushWrites out{done.bytes, "", done.counters};
  const std::string& error = stopped.empty() ? done.error : stopped;
  if (!error.empty()) {
    out.error = target.what + ": " + error;
    ring.close();
  }
  return out;
}

bool fill_ring(ChunkRing& ring, const std::vector<std::vector<StagedPart>>& parts,
               const std::vector<std::uint64_t>& bases, const std::function<void()>& midway) {
  std::size_t total = 0;
  for (const auto& p : parts) total += p.size();
  std::size_t pushed = 0;
  for (std::size_t r = 0; r < parts.size(); ++r) {
    for (const StagedPart& part : parts[r]) {
      if (!ring.push(bases[r] + part.offset, part.bytes)) return false;
      if (++pushed == total / 2 && midway) midway();
    }
  }
  return true;
}

}  // namespace ckpt::harness
