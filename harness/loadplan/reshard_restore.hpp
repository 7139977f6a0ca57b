#pragma once

// The read plans of a resharding restore ([restore], plan_rank_reads): the ranks of the restore's
// layout, each with the shards it needs placed in its buffer and the reads that fill them from the
// checkpoint's stored pieces (its manifest).

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

// What the planner needs besides the manifest: the model and the layout read into, how the rank
// buffers are laid out, and what wrote the checkpoint. A campaign case gives one (reshard_spec);
// `ckptbench load` builds one from the manifest alone (load_spec).
struct ReshardSpec {
  workloads::ModelSpec model;
  std::int64_t scale = 1;              // model.scale
  std::uint64_t seed = 1;              // data.seed: the tensors' data keys
  workloads::ParallelSpec writer;      // the checkpoint's parallel.* (for messages)
  RestoreSpec reader;                  // the layout, state and read mode read into
  std::uint64_t alignment = 0;         // strategy.alignment: shards placed at multiples of it
  std::uint64_t direct_alignment = 0;  // backend.direct_alignment under backend.direct, else 0
  std::uint64_t chunk_bytes = 0;       // strategy.chunk_bytes: the IoPlans' extents
  // How reads become requests: a reshard merges those that continue each other; the identity
  // plan of a same-layout restore keeps one per stored shard and merges them as the writer did
  // (strategy.coalesce_bytes), so that it reads exactly what the writer wrote, request by request.
  bool merge_adjacent = true;
  std::uint64_t coalesce_bytes = 0;
  // The identity target also keeps the writer's buffer: each needed shard at the memory offset
  // its manifest entry records for the same rank (one the writer did not store is placed after
  // them). false: shards packed in layout order.
  bool writer_placement = false;
  bool shared_files = false;      // strategy.mapping shares files between ranks
  std::string backend = "posix";  // backend.name (hdf5 stores datasets, not byte ranges to plan)
  // data.pattern: the trained pattern's keys carry each tensor's content in their low bits.
  DataPattern pattern = DataPattern::random;
};

// A case's resharding restore ([restore] into parallel.*'s checkpoint, backend.* as set).
ReshardSpec reshard_spec(const Case& c);

// Plans the resharding read of `ranks` (of spec.reader's layout) from `manifest` in `dir`. The
// shards' bytes, padding rows included, are those of the training iteration the manifest names
// (Manifest::iteration). Throws ReshardError naming the key when
// it cannot reshard (backend, a stored file that does not end on a whole block under
// backend.direct) or what plan_rank_reads refuses; std::runtime_error for a manifest that names
// a file outside `dir`.
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
