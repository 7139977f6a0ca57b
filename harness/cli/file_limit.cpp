#include "harness/cli/file_limit.hpp"

#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace ckpt::harness {

std::string raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return fmt::format("open files: getrlimit failed: {}", std::strerror(errno));
  if (limit.rlim_cur == limit.rlim_max) return "";
  const rlim_t before = limit.rlim_cur;
  limit.rlim_cur = limit.rlim_max;
  const auto shown = [](rlim_t n) {
    return n == RLIM_INFINITY ? std::string("unlimited") : std::to_string(n);
  };
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return fmt::format(
        "open files: the soft RLIMIT_NOFILE stays {} (raising it to the hard limit {} failed: {}); "
        "the posix backend batches plans with more files than half of it",
        shown(before), shown(limit.rlim_max), std::strerror(errno));
  }
  return fmt::format("open files: soft RLIMIT_NOFILE raised from {} to the hard limit {} at start",
                     shown(before), shown(limit.rlim_max));
}

}  // namespace ckpt::harness
