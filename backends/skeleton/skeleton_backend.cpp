#include "backends/skeleton/skeleton_backend.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "backends/file_common/mapped_file.hpp"
#include "backends/file_common/posix_file.hpp"

namespace ckpt::backends::skeleton {

class SkeletonBackend::Files final : public Backend::OpenFiles {
 public:
  struct Entry {
    std::string path;
    file_common::PosixFile file;
  };
  std::vector<Entry> entries;  // in plan order
};

SkeletonBackend::SkeletonBackend(const IoSettings& settings, std::uint64_t block_bytes)
    : settings_(settings), block_bytes_(block_bytes) {}

Capabilities SkeletonBackend::capabilities() const {
  return declared_capabilities({"skeleton", option_table(), {}});
}

std::unique_ptr<Backend::OpenFiles> SkeletonBackend::open(const IoPlan& plan, Direction direction) {
  const int flags = O_CLOEXEC | (direction == Direction::write ? O_WRONLY | O_CREAT : O_RDONLY);
  auto files = std::make_unique<Files>();
  for (const FilePlan& file : plan.files) {
    files->entries.push_back(Files::Entry{file.path, file_common::open_file(file.path, flags)});
  }
  return files;
}

void SkeletonBackend::transfer(OpenFiles& open_files, const IoPlan& plan, MemoryView memory,
                               Direction direction) {
  auto& files = static_cast<Files&>(open_files);
  const bool writing = direction == Direction::write;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    const Files::Entry& entry = files.entries[i];
    for (const Extent& extent : plan.files[i].extents) {
      for (std::uint64_t done = 0; done < extent.length;) {
        const std::uint64_t length = std::min(block_bytes_, extent.length - done);
        std::byte* data = memory.data + extent.memory_offset + done;
        const auto offset = static_cast<off_t>(extent.file_offset + done);
        const ssize_t moved = writing ? ::pwrite(entry.file.fd(), data, length, offset)
                                      : ::pread(entry.file.fd(), data, length, offset);
        if (moved < 0 && errno == EINTR) continue;
        if (moved <= 0) {  // 0: end of file before the plan's bytes (read) or no progress (write)
          throw IoError("skeleton", writing ? "pwrite" : "pread", entry.path, moved < 0 ? errno : 0,
                        extent.file_offset + done, length);
        }
        done += static_cast<std::uint64_t>(moved);
      }
    }
  }
}

void SkeletonBackend::sync(OpenFiles& open_files, Direction direction) {
  if (direction == Direction::write)
    file_common::sync_all("skeleton", static_cast<Files&>(open_files).entries, settings_.sync);
}

void SkeletonBackend::close(OpenFiles& open_files) {
  file_common::close_all("skeleton", static_cast<Files&>(open_files).entries);
}

std::unique_ptr<MappedFile> SkeletonBackend::map_file(const std::string& path) {
  return file_common::map_whole_file("skeleton", path);
}

}  // namespace ckpt::backends::skeleton
