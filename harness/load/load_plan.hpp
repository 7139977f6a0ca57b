#pragma once

// The load phase's read plans: an inference server's ranks (the case's [load] layout: TP load.tp,
// PP 1, DP 1, weights only) planned from the checkpoint's manifest by the resharding planner
// (harness/reshard/reshard_plan.hpp): exact byte ranges of every stored piece a rank's TP slice
// overlaps, coalesced, for raw and safetensors checkpoints alike (the manifest records where each
// tensor's bytes lie in its file; in a safetensors file, after the header as its data_offsets say).

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "harness/campaign/case.hpp"
#include "harness/load/weight_loader.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// The case as it wrote the checkpoint the load phase reads: its index is load.source_index (the
// first case that differs in [load] keys only), so its case directory holds that checkpoint.
Case load_source(const Case& c);

// Every rank of the case's inference layout: 0 .. load TP - 1.
std::vector<std::int64_t> inference_ranks(const Case& c);

// The plans of `ranks` of the inference layout. Throws ReshardError (naming the tensor, the
// global element and the fix) when the checkpoint does not store what a rank needs.
std::vector<RankPlan> load_plans(const nlohmann::json& manifest, const Case& c, const std::vector<std::int64_t>& ranks,
                                 const std::filesystem::path& dir);

// The byte ranges of `plans` for the loader, each at its place in a buffer whose plan p starts at
// offsets[p], in plan order (each plan's ranges grouped by file, in file-offset order).
std::vector<LoadFile> load_ranges(const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& offsets);

}  // namespace ckpt::harness
