#include "harness/common/directories.hpp"

#include <unistd.h>

namespace ckpt::harness {
namespace fs = std::filesystem;

bool writable_directory(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

std::optional<fs::path> uncreatable_directory(const fs::path& dir) {
  std::error_code ec;
  fs::path existing = dir;
  while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  if (writable_directory(existing)) return std::nullopt;
  return existing;
}

}  // namespace ckpt::harness
