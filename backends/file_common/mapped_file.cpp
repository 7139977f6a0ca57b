#include "backends/file_common/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "backends/file_common/posix_file.hpp"

namespace ckpt::backends::file_common {
namespace {

class Mapping final : public MappedFile {
 public:
  Mapping(void* data, std::uint64_t size) : data_(data), size_(size) {}
  ~Mapping() override {
    if (size_ > 0) ::munmap(data_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::span<const std::byte> bytes() const override {
    return {static_cast<const std::byte*>(data_), size_};
  }

 private:
  void* data_;
  std::uint64_t size_;
};

}  // namespace

std::unique_ptr<MappedFile> map_whole_file(std::string_view backend, const std::string& path) {
  // The descriptor is closed once mapped: the mapping keeps the file.
  const PosixFile file = open_file(path, O_RDONLY | O_CLOEXEC);
  const off_t end = ::lseek(file.fd(), 0, SEEK_END);
  if (end < 0) throw IoError(backend, "lseek", path, errno);
  const auto size = static_cast<std::uint64_t>(end);
  if (size == 0) return std::make_unique<Mapping>(nullptr, 0);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (data == MAP_FAILED) throw IoError(backend, "mmap", path, errno, 0, size);
  return std::make_unique<Mapping>(data, size);
}

}  // namespace ckpt::backends::file_common
