#include "harness/load/planned_load.hpp"

#include "harness/common/elapsed.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/load/load_storage.hpp"
#include "harness/loadplan/load_plan.hpp"

namespace ckpt::harness {

FileRanges prepare_planned_load(const std::vector<RankPlan>& plans, ProcessBuffer& buffer,
                                DataPattern pattern) {
  buffer.zero();
  const std::vector<std::uint64_t> offsets = buffer_offsets(plans, buffer);
  fill_reshard_padding(plans, offsets, buffer.memory(), pattern);
  return load_ranges(plans, offsets);
}

LoadTiming load_planned(const std::vector<RankPlan>& plans, const FileRanges& ranges,
                        ProcessBuffer& buffer, const LoadSettings& settings,
                        MemorySpace& pool_space, const LoadStorage& storage,
                        const FramedFiles& framed) {
  // The loader's own clock: from its first open to the last byte in place (its chunk pool is
  // allocated and touched before it), then the scatter of strided rows.
  // A collective backend's processes read together, those with nothing to read too.
  const bool reads = !ranges.ranges.empty() || loads_together(storage.backend);
  LoadTiming timing;
  if (reads && !framed.files.empty())
    timing = load_framed(ranges, framed, buffer.memory(), settings, pool_space, storage);
  else if (reads)
    timing = load_files(ranges, buffer.memory(), settings, pool_space, storage);
  const auto scatter = Clock::now();
  apply_reshard_copies(plans, buffer_offsets(plans, buffer), buffer.memory());
  timing.seconds += seconds_since(scatter);
  return timing;
}

}  // namespace ckpt::harness
