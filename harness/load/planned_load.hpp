#pragma once

// The load phase's timed load of planned ranges (load_plans, load_ranges) into a process buffer:
// the campaign's --phase load and `ckptbench load --tp` both run it.

#include <vector>

#include "harness/exec/process_buffer.hpp"
#include "harness/load/framed_load.hpp"
#include "harness/load/weight_loader.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// Before a timed load: `buffer` zeroed and the padding runs written with the pattern (as a server
// pads the vocabulary); returns the loader's ranges into it.
FileRanges prepare_planned_load(const std::vector<RankPlan>& plans, ProcessBuffer& buffer,
                                DataPattern pattern);

// The timed load: the loader's reads of `ranges` (prepare_planned_load's) into `buffer` through
// `storage` (a compressed checkpoint's, `framed` not empty: through its frames, load_framed; an
// hdf5 checkpoint's, whose plans hold dataset pieces: the pieces in one collective read), then the
// scatter of strided rows out of scratch; `seconds` includes the scatter. Throws what load_files
// and load_framed throw, and std::runtime_error for a failed read of the pieces.
LoadTiming load_planned(const std::vector<RankPlan>& plans, const FileRanges& ranges,
                        ProcessBuffer& buffer, const LoadSettings& settings,
                        MemorySpace& pool_space, const LoadStorage& storage,
                        const FramedFiles& framed = {});

}  // namespace ckpt::harness
