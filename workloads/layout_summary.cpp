#include "workloads/layout_summary.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <utility>

namespace ckpt::workloads {
namespace {

// Lower median and extremes of values given with multiplicities.
Distribution distribution(std::vector<std::pair<std::int64_t, std::int64_t>> weighted) {
  Distribution d;
  if (weighted.empty()) return d;
  std::sort(weighted.begin(), weighted.end());
  std::int64_t count = 0;
  for (const auto& [value, weight] : weighted) count += weight;
  const std::int64_t middle = (count - 1) / 2;
  std::int64_t seen = 0;
  for (const auto& [value, weight] : weighted) {
    seen += weight;
    if (seen > middle) {
      d.median = value;
      break;
    }
  }
  d.min = weighted.front().first;
  d.max = weighted.back().first;
  return d;
}

std::int64_t bucket_lower(std::int64_t bytes) {
  if (bytes <= 0) return 0;
  return std::int64_t{1} << (std::bit_width(static_cast<std::uint64_t>(bytes)) - 1);
}

}  // namespace

WorldSummary summarize(const Layout& layout) {
  const ParallelSpec& p = layout.parallel();
  WorldSummary summary;
  summary.parameters = layout.parameters();
  summary.world_size = layout.world_size();
  summary.checkpoint_bytes = layout.checkpoint_bytes();

  std::vector<std::pair<std::int64_t, std::int64_t>> bytes_weighted;
  std::vector<std::pair<std::int64_t, std::int64_t>> shards_weighted;
  std::map<std::int64_t, SizeBucket> buckets;
  // TP ranks other than 0 hold alike slices; under per-tensor sharding DCP spreads the
  // TP-replicated chunks over them (Layout::for_each_piece), so each is visited.
  const bool each_tp_rank =
      p.zero_sharding == ZeroSharding::per_tensor && layout.state().sizing == Sizing::exact;
  const std::int64_t visited_tp = each_tp_rank ? p.tp : std::min<std::int64_t>(p.tp, 2);
  for (std::int64_t stage = 0; stage < p.pp; ++stage) {
    for (std::int64_t d = 0; d < p.dp; ++d) {
      for (std::int64_t t = 0; t < visited_tp; ++t) {
        const std::int64_t rank = t + p.tp * (d + p.dp * stage);
        const std::int64_t alike = t == 0 || each_tp_rank ? 1 : p.tp - 1;
        const RankTotals totals = layout.totals(rank);
        bytes_weighted.emplace_back(totals.bytes, alike);
        shards_weighted.emplace_back(totals.tensors, alike);
        summary.shards += totals.tensors * alike;
        if (totals.bytes > 0) summary.writing_ranks += alike;
        layout.for_each_shard_size(rank, [&](std::int64_t size) {
          SizeBucket& bucket = buckets[bucket_lower(size)];
          bucket.shards += alike;
          bucket.bytes += size * alike;
        });
      }
    }
  }
  summary.rank_bytes = distribution(std::move(bytes_weighted));
  summary.rank_shards = distribution(std::move(shards_weighted));
  for (auto& [lower, bucket] : buckets) {
    bucket.lower = lower;
    summary.histogram.push_back(bucket);
  }
  return summary;
}

}  // namespace ckpt::workloads
