#include "scratch_dir.hpp"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace ckpt::bench {
namespace {

namespace fs = std::filesystem;

// statfs's f_type, or nothing when the path cannot be inspected.
bool fs_magic(const fs::path& path, std::uint64_t& magic) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return false;
  magic = static_cast<std::uint64_t>(info.f_type);
  return true;
}

bool in_memory(std::uint64_t magic) {
  return magic == TMPFS_MAGIC || magic == RAMFS_MAGIC;
}

std::string fs_name(std::uint64_t magic) {
  switch (magic) {
    case EXT4_SUPER_MAGIC:
      return "ext4";  // ext2/3/4 share the magic
    case XFS_SUPER_MAGIC:
      return "xfs";
    case BTRFS_SUPER_MAGIC:
      return "btrfs";
    case TMPFS_MAGIC:
      return "tmpfs";
    case RAMFS_MAGIC:
      return "ramfs";
    case NFS_SUPER_MAGIC:
      return "nfs";
    case OVERLAYFS_SUPER_MAGIC:
      return "overlayfs";
    default:
      break;
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(magic));
  return hex;
}

fs::path program_directory() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::current_path() : exe.parent_path();
}

// The parent directory and where it came from.
std::pair<fs::path, std::string> choose_parent() {
  if (const char* given = std::getenv("CKPT_BENCH_DIR"); given != nullptr && *given != '\0')
    return {given, "CKPT_BENCH_DIR"};
  std::uint64_t magic = 0;
  if (fs_magic("/var/tmp", magic) && !in_memory(magic)) return {"/var/tmp", "/var/tmp"};
  return {program_directory(), "program directory (/var/tmp is a memory file system)"};
}

}  // namespace

ScratchDir::ScratchDir() {
  auto [parent, origin] = choose_parent();
  std::string pattern = (parent / "ckpt-bench-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error("ckpt_bench_backends: mkdtemp " + pattern + " (parent from " + origin +
                             "): " + std::strerror(errno));
  }
  path_ = buffer.data();
  origin_ = std::move(origin);
  std::uint64_t magic = 0;
  fs_type_ = fs_magic(path_, magic) ? fs_name(magic) : "unknown";
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept
    : path_(std::move(other.path_)),
      fs_type_(std::move(other.fs_type_)),
      origin_(std::move(other.origin_)) {
  other.path_.clear();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ignored;  // a destructor cannot report; leftovers are named ckpt-bench-*
  fs::remove_all(path_, ignored);
}

}  // namespace ckpt::bench
