#pragma once

// The load planner for a checkpoint of a self-describing format (backend.name = "hdf5"), whose
// files hold each tensor as a dataset rather than bytes at the manifest's offsets: each shard an
// inference rank needs is read as hyperslabs of the datasets that store its tensor, which the
// backend reads into place (backends::DatasetPiece).
//
// How the hdf5 backend stored a tensor decides the hyperslab (backends/hdf5/README.md):
// - a file several processes share (strategy.mapping shares files) holds one dataset of the
//   tensor's global shape: any slice of what it holds is one hyperslab, whatever TP wrote it;
// - a file of one process holds a tensor whose pieces there are all one slice as a dataset of that
//   slice's shape (a framework's per-rank shard): a slice inside it is a hyperslab of it, offset by
//   where it starts; other tensors of such a file keep their global shape;
// - model.scale = s with backend.hdf5.shapes = "scaled" divided the leading dimension of every
//   dataset by s where every piece of it divided; such a dataset reads back only as slices that
//   divide too. A dataset kept at its global shape under s > 1 holds the first elements of each
//   piece only: only the writer's own pieces read back from it.
// A slice stored in several files becomes one hyperslab per file, each of which must land
// contiguously in the shard (a split of its leading dimension, as the vocabulary's); the rows
// beyond a stored tensor's leading dimension (another TP's vocabulary padding) are padding, as in
// the raw planner.

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/loadplan/reshard_restore.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// Whether the load planner plans datasets rather than byte ranges for a checkpoint written with
// backend `writer_backend`.
bool plans_datasets(std::string_view writer_backend);

// The plans of `ranks` of spec.reader's layout from the hdf5 checkpoint `manifest` in `dir`: the
// shards placed, padded and counted as reshard_plans does for raw bytes (its coverage checks and
// refusals included), each shard's reads replaced by dataset pieces of its files (marked shared:
// the backend opens each on the processes that read it), and the scale the files' shapes were
// written with in IoPlan::attributes. Throws ReshardError naming the tensor, the file and the fix
// where a slice is not such hyperslabs.
std::vector<RankPlan> dataset_load_plans(const Manifest& manifest, const ReshardSpec& spec,
                                         const std::vector<std::int64_t>& ranks,
                                         const std::filesystem::path& dir);

}  // namespace ckpt::harness
