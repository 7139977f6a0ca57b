#include "backends/file_common/open_limit.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace ckpt::backends::file_common {

std::size_t open_file_budget() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return std::max<std::size_t>(1, static_cast<std::size_t>(limit.rlim_cur / 2));
}

}  // namespace ckpt::backends::file_common
