#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ckpt::bench {

// A fresh directory the I/O benchmarks write into, removed with everything in it when the
// object is destroyed. Created by mkdtemp under $CKPT_BENCH_DIR when set, else under /var/tmp
// unless that is a memory file system (tmpfs or ramfs: page-cache speed, and no O_DIRECT),
// else next to the benchmark program (the build tree's file system). Move-only.
class ScratchDir {
 public:
  ScratchDir();  // throws std::runtime_error naming the parent and the errno text
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // File system type of the directory as statfs reports it ("ext4", "xfs", "tmpfs", or hex).
  const std::string& fs_type() const { return fs_type_; }
  // Where the parent came from: "CKPT_BENCH_DIR", "/var/tmp" or "program directory".
  const std::string& origin() const { return origin_; }

 private:
  std::filesystem::path path_;
  std::string fs_type_;
  std::string origin_;
};

}  // namespace ckpt::bench
