#include "harness/exec/cache_policy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <set>

namespace ckpt::harness {
namespace {

void fadvise_files(const std::vector<backends::IoPlan>& plans) {
  std::set<std::string> paths;
  for (const auto& plan : plans) {
    for (const auto& file : plan.files) paths.insert(file.path);
  }
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // a missing file is the restore's error to report, with context
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

bool drop_caches() {
  ::sync();
  std::ofstream out("/proc/sys/vm/drop_caches");
  out << "3\n";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

std::string apply_cache_policy(CachePolicy policy, const std::vector<backends::IoPlan>& plans) {
  switch (policy) {
    case CachePolicy::none:
      return "none";
    case CachePolicy::fadvise:
      fadvise_files(plans);
      return "fadvise";
    case CachePolicy::read_shift:
      fadvise_files(plans);
      return "read_shift+fadvise";
    case CachePolicy::drop:
      if (drop_caches()) return "drop_caches";
      fadvise_files(plans);
      return "fadvise (drop_caches not permitted)";
  }
  return "none";
}

}  // namespace ckpt::harness
