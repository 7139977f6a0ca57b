#pragma once

#include <cufile.h>

#include <cstdint>
#include <string>
#include <utility>

#include "backends/file_common/posix_file.hpp"
#include "backends/gds/cufile_api.hpp"

namespace ckpt::backends::gds {

// An open file descriptor registered with cuFile, move-only. close() deregisters the cuFile
// handle, then closes the descriptor; the destructor does the same without reporting.
class GdsFile {
 public:
  GdsFile() = default;
  ~GdsFile() { close(); }
  GdsFile(GdsFile&& other) noexcept
      : file_(std::move(other.file_)),
        api_(other.api_),
        handle_(std::exchange(other.handle_, nullptr)) {}
  GdsFile& operator=(GdsFile&& other) noexcept;
  GdsFile(const GdsFile&) = delete;
  GdsFile& operator=(const GdsFile&) = delete;

  int fd() const noexcept { return file_.fd(); }
  CUfileHandle_t handle() const noexcept { return handle_; }

  // 0, or the errno of close(); the handle and descriptor are released either way.
  int close() noexcept;

 private:
  friend GdsFile open_gds_file(const CufileApi& api, const std::string& path, int flags);
  friend void reserve(const GdsFile& file, const std::string& path, std::uint64_t offset,
                      std::uint64_t end);

  file_common::PosixFile file_;
  const CufileApi* api_ = nullptr;
  CUfileHandle_t handle_ = nullptr;
};

// Opens `path` with `flags` (mode 0644 when O_CREAT creates it) and registers it with cuFile.
// Throws IoError naming the path: open(2) errors with errno (EINVAL with O_DIRECT: the file
// system refuses O_DIRECT), cuFileHandleRegister errors with cuFile's reason.
GdsFile open_gds_file(const CufileApi& api, const std::string& path, int flags);

// Reserves bytes [offset, end) of the file with fallocate (mode 0); nothing when end <= offset.
// Throws IoError; a file system without fallocate says to set `fallocate = false`.
void reserve(const GdsFile& file, const std::string& path, std::uint64_t offset, std::uint64_t end);

}  // namespace ckpt::backends::gds
