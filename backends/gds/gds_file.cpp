#include "backends/gds/gds_file.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "backends/backend.hpp"

namespace ckpt::backends::gds {
namespace {

const char* open_operation(int flags) {
  return (flags & O_ACCMODE) == O_RDONLY ? "open for reading" : "open for writing";
}

file_common::PosixFile open_descriptor(const std::string& path, int flags) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) return file_common::PosixFile(fd);
  const int error = errno;
  if (error == EINVAL && (flags & O_DIRECT) != 0) {
    throw IoError(std::string("gds: ") + open_operation(flags) + " " + path +
                  " with O_DIRECT: " + std::strerror(error) +
                  " — the file system refuses O_DIRECT; set `direct = false`");
  }
  throw IoError("gds", open_operation(flags), path, error);
}

}  // namespace

GdsFile& GdsFile::operator=(GdsFile&& other) noexcept {
  if (this != &other) {
    close();
    file_ = std::move(other.file_);
    api_ = other.api_;
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

int GdsFile::close() noexcept {
  if (handle_ != nullptr) api_->handle_deregister(std::exchange(handle_, nullptr));
  return file_.close();
}

GdsFile open_gds_file(const CufileApi& api, const std::string& path, int flags) {
  GdsFile file;
  file.file_ = open_descriptor(path, flags);
  file.api_ = &api;
  CUfileDescr_t description{};
  description.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
  description.handle.fd = file.file_.fd();
  description.fs_ops = nullptr;
  const CUfileError_t status = api.handle_register(&file.handle_, &description);
  if (status.err != CU_FILE_SUCCESS) {
    file.handle_ = nullptr;
    std::string message = "gds: cuFileHandleRegister " + path + ": " + cufile_error_text(status);
    if (status.err == CU_FILE_INVALID_FILE_OPEN_FLAG || status.err == CU_FILE_DIO_NOT_SET) {
      message += " — this cuFile needs O_DIRECT here; set `direct = true`";
    }
    throw IoError(message);
  }
  return file;
}

void reserve(const GdsFile& file, const std::string& path, std::uint64_t offset,
             std::uint64_t end) {
  file_common::reserve(file.file_, path, offset, end, "gds");
}

}  // namespace ckpt::backends::gds
