#include "backends/file_common/work_split.hpp"

#include <algorithm>

namespace ckpt::backends::file_common {

std::vector<std::vector<Piece>> split_by_bytes(const IoPlan& plan, std::size_t workers,
                                               std::uint64_t granule) {
  std::vector<std::vector<Piece>> lists;
  const std::uint64_t total = plan.bytes();
  if (total == 0) return lists;
  const std::uint64_t even = (total + workers - 1) / workers;
  const std::uint64_t share = (even + granule - 1) / granule * granule;

  std::uint64_t filled = share;  // bytes in the current list; "full" starts the first one
  for (std::size_t f = 0; f < plan.files.size(); ++f) {
    for (const Extent& extent : plan.files[f].extents) {
      std::uint64_t done = 0;
      while (done < extent.length) {
        if (filled == share) {
          lists.emplace_back();
          filled = 0;
        }
        const std::uint64_t take = std::min(extent.length - done, share - filled);
        lists.back().push_back(
            Piece{f, extent.file_offset + done, extent.memory_offset + done, take});
        filled += take;
        done += take;
      }
    }
  }
  return lists;
}

}  // namespace ckpt::backends::file_common
