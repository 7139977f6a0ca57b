#include "harness/load/planned_load.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "harness/common/elapsed.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/exec/iteration.hpp"
#include "harness/load/load_storage.hpp"
#include "harness/loadplan/load_plan.hpp"

namespace ckpt::harness {
namespace {

bool reads_datasets(const std::vector<RankPlan>& plans) {
  for (const RankPlan& p : plans) {
    for (const backends::FilePlan& f : p.io.files) {
      if (!f.datasets.empty()) return true;
    }
  }
  return false;
}

// A checkpoint of a self-describing format (hdf5; dataset_load_plans): every rank's dataset
// pieces in one Backend::read of the process through the executor, which every process of the
// backend's group makes together, even one with no piece; device memory through a host buffer of
// its size, each piece copied up after the read.
LoadTiming load_datasets(const std::vector<RankPlan>& plans, ProcessBuffer& buffer,
                         MemorySpace& pool_space, const LoadStorage& storage) {
  const backends::IoPlan plan = process_plan(plans, buffer);
  const std::unique_ptr<backends::Backend> backend = make_load_backend(storage, false);
  const bool device = buffer.view().kind == backends::MemoryKind::device;
  const std::unique_ptr<Buffer> host =
      device ? pool_space.allocate(std::max<std::uint64_t>(buffer.view().size, 4096)) : nullptr;
  LoadTiming timing;
  for (const backends::FilePlan& f : plan.files) {
    for (const backends::DatasetPiece& piece : f.datasets) {
      timing.bytes += piece.bytes();
      ++timing.reads;
    }
  }
  const auto start = Clock::now();
  Execution done =
      execute_plans(*backend, {{&plan, host ? host->view() : buffer.view(), 0, "load"}}, false);
  if (!done.error.empty()) throw std::runtime_error(done.error);
  timing.counters = std::move(done.counters);
  timing.notes = std::move(done.notes);
  if (host) {
    const auto copy_start = Clock::now();
    for (const backends::FilePlan& f : plan.files) {
      for (const backends::DatasetPiece& piece : f.datasets) {
        buffer.memory().copy_from_host(piece.memory_offset,
                                       {host->view().data + piece.memory_offset, piece.bytes()});
      }
    }
    timing.copy_seconds = seconds_since(copy_start);
  }
  timing.seconds = seconds_since(start);
  return timing;
}

}  // namespace

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
  // A process with no piece (fewer inference ranks than processes) takes part in the collective
  // read with an empty plan, through load_files.
  if (reads_datasets(plans))
    timing = load_datasets(plans, buffer, pool_space, storage);
  else if (reads && !framed.files.empty())
    timing = load_framed(ranges, framed, buffer.memory(), settings, pool_space, storage);
  else if (reads)
    timing = load_files(ranges, buffer.memory(), settings, pool_space, storage);
  const auto scatter = Clock::now();
  apply_reshard_copies(plans, buffer_offsets(plans, buffer), buffer.memory());
  timing.seconds += seconds_since(scatter);
  return timing;
}

}  // namespace ckpt::harness
