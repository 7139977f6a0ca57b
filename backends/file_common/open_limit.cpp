#include "backends/file_common/open_limit.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace ckpt::backends::file_common {

std::size_t open_file_budget() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return std::max<std::size_t>(1, static_cast<std::size_t>(limit.rlim_cur / 2));
}

std::vector<std::vector<std::size_t>> busy_file_batches(const IoPlan& plan, std::size_t batch) {
  std::vector<std::vector<std::size_t>> batches;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    if (plan.files[i].extents.empty()) continue;
    if (batches.empty() || batches.back().size() >= std::max<std::size_t>(1, batch))
      batches.emplace_back();
    batches.back().push_back(i);
  }
  return batches;
}

}  // namespace ckpt::backends::file_common
