#include "backends/file_common/posix_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

PosixFile& PosixFile::operator=(PosixFile&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

int PosixFile::close() noexcept {
  if (fd_ < 0) return 0;
  const int result = ::close(std::exchange(fd_, -1));
  if (result == 0 || errno == EINTR) return 0;
  return errno;
}

PosixFile open_file(const std::string& path, int flags) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) return PosixFile(fd);

  const int error = errno;
  const char* operation = (flags & O_ACCMODE) == O_RDONLY ? "open for reading" : "open for writing";
  if (error == EINVAL && (flags & O_DIRECT) != 0) {
    throw IoError(std::string("posix: ") + operation + " " + path +
                  " with O_DIRECT: " + std::strerror(error) +
                  " — the file system refuses O_DIRECT; set `direct = false`");
  }
  throw IoError("posix", operation, path, error);
}

void reserve(const PosixFile& file, const std::string& path, std::uint64_t offset,
             std::uint64_t end, std::string_view backend) {
  if (end <= offset) return;
  const std::uint64_t size = end - offset;
  int result = 0;
  do {
    result = ::fallocate(file.fd(), 0, static_cast<off_t>(offset), static_cast<off_t>(size));
  } while (result != 0 && errno == EINTR);
  if (result == 0) return;

  const int error = errno;
  if (error == EOPNOTSUPP) {
    throw IoError(std::string(backend) + ": fallocate " + path + " (" + std::to_string(size) +
                  " bytes): " + std::strerror(error) +
                  " — the file system cannot reserve space; set `fallocate = false`");
  }
  throw IoError(backend, "fallocate", path, error, offset, size);
}

void sync_descriptor(int fd, std::string_view backend, const std::string& path, SyncPolicy policy) {
  if (policy == SyncPolicy::none) return;
  const bool data_only = policy == SyncPolicy::fdatasync;
  int result = 0;
  do {
    result = data_only ? ::fdatasync(fd) : ::fsync(fd);
  } while (result != 0 && errno == EINTR);
  if (result != 0) throw IoError(backend, data_only ? "fdatasync" : "fsync", path, errno);
}

}  // namespace ckpt::backends::file_common
