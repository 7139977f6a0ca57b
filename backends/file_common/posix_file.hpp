#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

// An owned file descriptor, move-only. close() releases it and reports the error; the
// destructor releases whatever is still open without reporting (after an earlier error).
class PosixFile {
 public:
  PosixFile() = default;
  explicit PosixFile(int fd) noexcept : fd_(fd) {}
  ~PosixFile() { close(); }

  PosixFile(PosixFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  PosixFile& operator=(PosixFile&& other) noexcept;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  int fd() const noexcept { return fd_; }
  bool is_open() const noexcept { return fd_ >= 0; }

  // Closes the descriptor: 0, or the errno of close(). The descriptor is released either way
  // (Linux frees it even when close fails, so it is never closed twice). EINTR counts as
  // success for the same reason: retrying could close a descriptor another thread reused.
  int close() noexcept;

 private:
  int fd_ = -1;
};

// Opens `path` with `flags` (mode 0644 when O_CREAT creates it), retrying EINTR. Throws
// IoError naming the path; with O_DIRECT, an EINVAL says the file system refuses O_DIRECT and
// to set `direct = false`.
PosixFile open_file(const std::string& path, int flags);

// Reserves bytes [0, size) of the file (fallocate mode 0: allocates holes, never changes data
// already written, extends the size to `size` when smaller). Nothing for size 0. Throws IoError;
// a file system without fallocate says to set `fallocate = false`.
// `backend` names the backend in errors (gds reuses this).
void reserve(const PosixFile& file, const std::string& path, std::uint64_t offset,
             std::uint64_t end, std::string_view backend = "posix");

// Closes the file of every entry (members `path` and `file`), all of them even after a
// failure, then throws IoError for the first close that failed (close errors matter on NFS).
template <typename Entry>
void close_all(std::string_view backend, std::vector<Entry>& entries) {
  const Entry* failed = nullptr;
  int failed_errno = 0;
  for (Entry& entry : entries) {
    const int error = entry.file.close();
    if (error != 0 && failed == nullptr) {
      failed = &entry;
      failed_errno = error;
    }
  }
  if (failed != nullptr) throw IoError(backend, "close", failed->path, failed_errno);
}

// fsync or fdatasync of every entry's descriptor (members `path` and `file` with fd()), as
// `policy` says; nothing for SyncPolicy::none. Throws IoError for the first failure.
void sync_descriptor(int fd, std::string_view backend, const std::string& path, SyncPolicy policy);

template <typename Entry>
void sync_all(std::string_view backend, std::vector<Entry>& entries, SyncPolicy policy) {
  for (Entry& entry : entries) sync_descriptor(entry.file.fd(), backend, entry.path, policy);
}

}  // namespace ckpt::backends::file_common
