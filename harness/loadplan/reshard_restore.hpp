#pragma once

// The load planner: the read plans of the ranks of a target, each with the shards it needs placed
// in its buffer and the reads that fill them from the checkpoint's stored pieces (its manifest),
// by plan_rank_reads. The target is another layout (a resharding
// restore, [restore]; an inference load, load_plans) or the writer's own (a
// same-layout restore: the identity target).

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/plan/checkpoint_plan.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// Why a case cannot be resharded as asked (a plan problem, not a damaged manifest).
class ReshardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The modeled ranks of the restore's layout that the case selects (restore.select or ranks.*).
std::vector<std::int64_t> restore_selected_ranks(const Case& c);

// What the planner needs besides the manifest: the target, the model and the layout read into,
// how the rank buffers are laid out, and what wrote the checkpoint. A campaign case gives one
// (reshard_spec, identity_spec); `ckptbench load` builds one from the manifest alone
// (load_spec).
struct ReshardSpec {
  // The identity target: each rank reads back the entries the manifest records for it, whole, at
  // the memory offsets the writer's buffer held them (the model, the reader's layout and the seed
  // are not used). false: the shards of `reader`'s layout, packed in layout order.
  bool identity = false;
  workloads::ModelSpec model;
  std::int64_t scale = 1;          // model.scale
  std::uint64_t seed = 1;          // data.seed: the tensors' data keys
  workloads::ParallelSpec writer;  // the checkpoint's parallel.* (for messages)
  RestoreSpec reader;              // the layout, state and read mode read into
  std::uint64_t alignment = 0;     // strategy.alignment: shards placed at multiples of it
  // Under backend.direct, the block every request keeps to: backend.direct_alignment (identity:
  // strategy.alignment, the writer's blocks); else 0.
  std::uint64_t direct_alignment = 0;
  std::uint64_t chunk_bytes = 0;  // strategy.chunk_bytes: the IoPlans' extents
  // How reads become requests: a reshard merges those that continue each other; the identity
  // plan of a same-layout restore keeps one per stored shard and merges them as the writer did
  // (strategy.coalesce_bytes), so that it reads exactly what the writer wrote, request by request.
  bool merge_adjacent = true;
  std::uint64_t coalesce_bytes = 0;
  bool shared_files = false;      // strategy.mapping shares files between ranks
  std::string backend = "posix";  // backend.name (hdf5 stores datasets, not byte ranges to plan)
  // data.pattern: the trained pattern's keys carry each tensor's content in their low bits.
  DataPattern pattern = DataPattern::random;
};

// A case's resharding restore ([restore] into parallel.*'s checkpoint, backend.* as set).
ReshardSpec reshard_spec(const Case& c);

// A case's same-layout restore: the identity target, its requests shaped as the case writes them
// (strategy.coalesce_bytes, chunk_bytes, alignment; backend.direct).
ReshardSpec identity_spec(const Case& c);

// The identity target's plan of `rank`: `entries` (none for a rank that wrote nothing, as
// Megatron's gathered DP ranks), each read whole into the place its memory_offset names (the
// writer's buffer's); the buffer ends where the last entry does (strategy.alignment).
RankPlan plan_identity_rank(const Manifest& manifest, const ReshardSpec& spec, std::int64_t rank,
                            const std::vector<const ManifestTensor*>& entries,
                            const std::filesystem::path& dir);

// Plans the read of `ranks` (of spec.reader's layout, or the writer's for the identity target)
// from `manifest` in `dir`. The shards' bytes, padding rows included, are those of the training
// iteration the manifest names (Manifest::iteration). Resharding plans come in the order that
// reads the stored files front to back; identity plans in rank order. Throws ReshardError naming
// the key when it cannot reshard (backend, a stored file that does not end on a whole block under
// backend.direct) or what plan_rank_reads refuses; std::runtime_error for a manifest that names a
// file outside `dir`.
std::vector<RankPlan> reshard_plans(const Manifest& manifest, const ReshardSpec& spec,
                                    const std::vector<std::int64_t>& ranks,
                                    const std::filesystem::path& dir);

// Before the timed read: writes the padding runs (data_pattern) of every plan into the buffer
// whose plan p starts at offsets[p].
void fill_reshard_padding(const std::vector<RankPlan>& plans,
                          const std::vector<std::uint64_t>& offsets, Buffer& buffer,
                          DataPattern pattern);

// After the read: the copies of every plan, scratch to shards (whole_items narrowing, exact
// scatter).
void apply_reshard_copies(const std::vector<RankPlan>& plans,
                          const std::vector<std::uint64_t>& offsets, Buffer& buffer);

}  // namespace ckpt::harness
