#pragma once

// The read plans of a resharding restore ([restore], harness/reshard/reshard_plan.hpp): the
// ranks of the restore's layout, each with the shards it needs placed in its buffer and the
// reads that fill them from the checkpoint's stored pieces (its manifest).

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "harness/campaign/case.hpp"
#include "harness/plan/checkpoint_plan.hpp"

namespace ckpt::harness {

// Why a case cannot be resharded as asked (a plan problem, not a damaged manifest).
class ReshardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The modeled ranks of the restore's layout that the case selects (restore.select or ranks.*).
std::vector<std::int64_t> restore_selected_ranks(const Case& c);

// Plans the resharding restore of `ranks` (of the restore's layout) from `manifest` in `dir`.
// Throws ReshardError naming the key when the case cannot reshard (backend, phase, a stored file
// that does not end on a whole block under backend.direct) or what plan_rank_reads refuses.
std::vector<RankPlan> reshard_plans(const nlohmann::json& manifest, const Case& c,
                                    const std::vector<std::int64_t>& ranks, const std::filesystem::path& dir);

// Before the timed read: writes the padding runs (data_pattern) of every plan into the buffer
// whose plan p starts at offsets[p].
void fill_reshard_padding(const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& offsets,
                          Buffer& buffer, DataPattern pattern);

// After the read: the copies of every plan, scratch to shards (whole_items narrowing, exact scatter).
void apply_reshard_copies(const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& offsets,
                          Buffer& buffer);

}  // namespace ckpt::harness
