#pragma once

// The load phase's read plans: an inference server's ranks (TP N, PP 1, DP 1, weights only) planned
// from the checkpoint's manifest by the resharding planner (plan_rank_reads): exact byte ranges of
// every stored piece a rank's TP slice overlaps, coalesced, for raw and safetensors checkpoints
// alike (the manifest records where each tensor's bytes lie in its file; in a safetensors file,
// after the header as its data_offsets say). The campaign's --phase load (LoadPhase) and
// `ckptbench load --tp` (run_load) both plan, load and count through these.

#include <filesystem>
#include <vector>

#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/plan/plan_items.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// The planner's input for the load phase of `c`: its [load] layout; load.direct (not
// backend.direct) says how the loader opens the files, and the loader aligns its O_DIRECT reads
// itself, so the plan is unaligned.
ReshardSpec load_spec(const Case& c);

// The same for a checkpoint alone (`ckptbench load --tp`): the model, the writer's parallelism,
// state, seed and placement from its manifest (the model by the manifest's model.name, a zoo name
// or a file). Throws std::runtime_error naming the manifest key that is missing or unusable, and
// workloads::SpecError (key "tp") when `tp` does not suit the model.
ReshardSpec load_spec(const Manifest& manifest, std::int64_t tp, std::uint64_t gap_bytes);

// Every rank of an inference layout: 0 .. world size - 1.
std::vector<std::int64_t> inference_ranks(const RestoreSpec& layout);

// A compressed checkpoint (strategy.compression) as its load plans see it: each file decoded, its
// pieces back to back in their stored order at their logical sizes; stored_bytes 0 and the writer's
// compression none. Tensor i stays tensor i. The manifest itself when nothing is compressed.
Manifest decoded_manifest(const Manifest& manifest);

// The plans of `ranks` of spec.reader's layout (a compressed checkpoint's over its decoded files,
// decoded_manifest: the loader reads whole frames and copies these ranges out, load_framed; an
// hdf5 checkpoint's as dataset pieces, dataset_load_plans). Throws
// ReshardError (naming the tensor, the global element and the fix) when the checkpoint does not
// store what a rank needs.
std::vector<RankPlan> load_plans(const Manifest& manifest, const ReshardSpec& spec,
                                 const std::vector<std::int64_t>& ranks,
                                 const std::filesystem::path& dir);

// The byte ranges of `plans` for the loader, each at its place in a buffer whose plan p starts at
// offsets[p], in plan order (each plan's ranges grouped by file, in file-offset order).
FileRanges load_ranges(const std::vector<RankPlan>& plans,
                       const std::vector<std::uint64_t>& offsets);

// What a set of plans moves, summed over its ranks.
struct LoadCounts {
  std::uint64_t bytes_needed = 0;   // bytes of the ranks' weights the checkpoint stores
  std::uint64_t bytes_read = 0;     // bytes the planned ranges cover: bytes_needed + bridged_bytes
  std::uint64_t bridged_bytes = 0;  // file gaps (up to gap_bytes) read into scratch and dropped
  std::uint64_t padding_bytes = 0;  // vocabulary padding of another TP: stored nowhere, not read
  std::uint64_t requests = 0;       // planned ranges after coalescing
};
LoadCounts load_counts(const std::vector<RankPlan>& plans);

}  // namespace ckpt::harness
