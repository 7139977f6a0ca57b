#include "harness/load/load_plan.hpp"

#include <numeric>

#include "harness/reshard/reshard_restore.hpp"

namespace ckpt::harness {

Case load_source(const Case& c) {
  Case source = c;
  source.index = c.load.source_index;
  return source;
}

std::vector<std::int64_t> inference_ranks(const Case& c) {
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(c.load.inference.parallel.world_size()));
  std::iota(ranks.begin(), ranks.end(), std::int64_t{0});
  return ranks;
}

std::vector<RankPlan> load_plans(const nlohmann::json& manifest, const Case& c, const std::vector<std::int64_t>& ranks,
                                 const std::filesystem::path& dir) {
  // The load is a restore into the inference layout; load.direct (not backend.direct) says how
  // the loader opens the files, and the loader aligns its O_DIRECT reads itself.
  Case reader = c;
  reader.restore = c.load.inference;
  reader.io.direct = false;
  return reshard_plans(manifest, reader, ranks, dir);
}

std::vector<LoadFile> load_ranges(const std::vector<RankPlan>& plans, const std::vector<std::uint64_t>& offsets) {
  std::vector<LoadFile> ranges;
  for (std::size_t p = 0; p < plans.size(); ++p) {
    for (const ReadRequest& r : plans[p].reshard.requests) {
      ranges.push_back({.path = plans[p].io.files[r.file].path,
                        .size = r.length,
                        .destination_offset = offsets[p] + r.memory_offset,
                        .file_offset = r.file_offset});
    }
  }
  return ranges;
}

}  // namespace ckpt::harness
