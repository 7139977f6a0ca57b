#include "harness/engine/flush_writes.hpp"

#include <fmt/format.h>

#include <exception>

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

// One modeled rank's plan, streamed chunk by chunk from the ring. Returns the error or "".
std::string stream_plan(backends::Backend& backend, ChunkRing& ring, const backends::IoPlan& plan,
                        const std::vector<StagedPart>& parts, FlushWrites& out) {
  PartStream stream(plan);
  stream.begin(backend, true);
  for (std::size_t k = 0; k < parts.size() && stream.ok(); ++k) {
    const std::optional<backends::MemoryView> chunk = ring.front();
    if (!chunk)
      return fmt::format("the snapshot copy stopped before chunk {} of {}", k + 1, parts.size());
    stream.transfer(parts[k], *chunk);
    ring.pop();
  }
  const backends::IoOutcome io = stream.finish();
  out.bytes += io.bytes;
  for (const auto& [name, count] : io.counters) out.counters[name] += count;
  return io.ok() ? "" : *io.error;
}

}  // namespace

FlushWrites write_through_ring(backends::Backend& backend, ChunkRing& ring,
                               const FlushTarget& target) {
  FlushWrites out;
  for (std::size_t i = 0; i < target.plans.size() && out.error.empty(); ++i) {
    std::string problem;
    try {
      problem = stream_plan(backend, ring, target.plans[i], target.parts[i], out);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty())
      out.error = fmt::format("{}: rank {}: {}", target.what, target.ranks[i], problem);
  }
  if (!out.error.empty()) ring.close();
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
