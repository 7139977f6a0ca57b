#include "harness/run/phase_summary.hpp"

#include <algorithm>
#include <cmath>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {
namespace {

// What both directions report: medians of the iterations' times, and the spreads and stragglers
// of the iteration closest to the median, whose index goes to `closest_at`.
PhaseSummary summarize(const std::vector<IterationTiming>& timings, std::uint64_t bytes,
                       std::size_t& closest_at, std::vector<double>& mkdir) {
  PhaseSummary s;
  std::vector<double> open, transfer, sync, close, copies;
  for (const IterationTiming& t : timings) {
    for (const auto& [name, count] : t.counters) s.counters[name] += count;
    if (t.latency) {
      if (!s.latency) s.latency.emplace();
      s.latency->merge(*t.latency);
    }
    s.iteration_seconds.push_back(t.seconds);
    s.iteration_process0_seconds.push_back(t.process0_seconds);
    copies.push_back(t.copy_seconds);
    open.push_back(t.phases.open);
    transfer.push_back(t.phases.transfer);
    sync.push_back(t.phases.sync);
    close.push_back(t.phases.close);
    mkdir.push_back(t.mkdir_seconds);
    s.cpu.user_seconds += t.cpu_user_seconds;
    s.cpu.system_seconds += t.cpu_system_seconds;
    s.cpu.process_seconds += t.seconds * t.processes;
  }
  s.seconds = median(s.iteration_seconds);
  s.gib_per_s = s.seconds > 0 ? static_cast<double>(bytes) / s.seconds / kGiB : 0;
  const auto closest =
      std::min_element(timings.begin(), timings.end(), [&](const auto& a, const auto& b) {
        return std::abs(a.seconds - s.seconds) < std::abs(b.seconds - s.seconds);
      });
  s.process_seconds = closest->process_seconds;
  s.rank_seconds = closest->rank_seconds;
  s.stragglers = closest->stragglers;
  s.phases = {median(open), median(transfer), median(sync), median(close)};
  s.copy_seconds = median(copies);
  closest_at = static_cast<std::size_t>(closest - timings.begin());
  return s;
}

}  // namespace

std::optional<PhaseSummary> summarize_reads(const std::vector<IterationTiming>& timings,
                                            std::uint64_t bytes) {
  if (timings.empty()) return std::nullopt;
  std::size_t closest = 0;
  std::vector<double> mkdir;
  PhaseSummary s = summarize(timings, bytes, closest, mkdir);
  std::erase_if(s.stragglers, [](const Straggler& st) { return st.phase == "mkdir"; });
  return s;
}

std::optional<PhaseSummary> summarize_writes(const std::vector<IterationTiming>& timings,
                                             std::uint64_t bytes, const SideSeconds& side,
                                             bool dcp_metadata) {
  if (timings.empty()) return std::nullopt;
  std::size_t at = 0;
  std::vector<double> mkdir;
  PhaseSummary s = summarize(timings, bytes, at, mkdir);
  s.iteration_mkdir = mkdir;
  s.mkdir_seconds = median(mkdir);
  s.iteration_manifest = side.manifest;
  s.manifest_seconds = median(side.manifest);
  s.iteration_metadata = side.metadata;
  s.metadata_seconds = median(side.metadata);
  s.iteration_gather = side.gather;
  s.gather_seconds = median(side.gather);
  s.gather_bytes = side.gathered.received_bytes;
  s.gather_local_bytes = side.gathered.local_bytes;
  s.iteration_retire = side.retire;
  s.retire_seconds = median(side.retire);
  // Process 0 alone commits the manifest.
  if (at < side.manifest.size()) s.stragglers.push_back({"manifest", 0, side.manifest[at]});
  if (dcp_metadata && at < side.metadata.size())
    s.stragglers.push_back({"metadata", 0, side.metadata[at]});
  return s;
}

}  // namespace ckpt::harness
