#include "backends/posix/posix_backend.hpp"

#include "backends/file_common/direct_checks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/posix/extent_io.hpp"
#include "backends/posix/posix_declaration.hpp"
#include "backends/file_common/posix_file.hpp"
#include "backends/file_common/work_split.hpp"
#include "backends/file_common/workers.hpp"

namespace ckpt::backends::posix {
namespace {

using file_common::check_direct_memory;
using file_common::check_direct_plan;
using file_common::close_all;
using file_common::kPage;
using file_common::open_file;
using file_common::Piece;
using file_common::PosixFile;
using file_common::reserve;
using file_common::run_workers;
using file_common::split_by_bytes;
using file_common::sync_all;
using file_common::validate_direct_alignment;

}  // namespace

class PosixBackend::Files final : public Backend::OpenFiles {
 public:
  struct Entry {
    std::string path;
    PosixFile file;
  };
  std::vector<Entry> entries;
};

PosixBackend::PosixBackend(const IoSettings& settings) : settings_(settings) {
  validate_direct_alignment("posix", settings_);
}

Capabilities PosixBackend::capabilities() const { return declared_capabilities({"posix", option_table(), {}}); }

std::unique_ptr<Backend::OpenFiles> PosixBackend::open(const IoPlan& plan, Direction direction) {
  if (settings_.direct) check_direct_plan("posix", plan, settings_.direct_alignment);
  const bool writing = direction == Direction::write;
  int flags = O_CLOEXEC | (writing ? O_WRONLY | O_CREAT : O_RDONLY);
  if (settings_.direct) flags |= O_DIRECT;

  auto files = std::make_unique<Files>();
  files->entries.reserve(plan.files.size());
  for (const FilePlan& file : plan.files) {
    PosixFile handle = open_file(file.path, flags);
    if (writing && settings_.fallocate) reserve(handle, file.path, file.reserve_offset, file.file_size);
    files->entries.push_back(Files::Entry{file.path, std::move(handle)});
  }
  return files;
}

void PosixBackend::transfer(OpenFiles& open_files, const IoPlan& plan, MemoryView memory,
                            Direction direction) {
  check_direct_memory("posix", plan, memory, settings_);
  auto& files = static_cast<Files&>(open_files);
  const std::uint64_t alignment = settings_.direct ? settings_.direct_alignment : 0;
  const std::uint64_t granule = settings_.direct ? alignment : kPage;
  const auto lists = split_by_bytes(plan, static_cast<std::size_t>(settings_.threads), granule);

  auto body = [&](std::size_t k, std::stop_token stop) {
    for (const Piece& piece : lists[k]) {
      if (stop.stop_requested()) return;
      Files::Entry& entry = files.entries[piece.file];
      const ByteRun run{entry.file.fd(), &entry.path, piece.file_offset,
                        memory.data + piece.memory_offset, piece.length};
      if (direction == Direction::write) {
        write_run(run, stop);
      } else {
        read_run(run, alignment, stop);
      }
    }
  };
  if (lists.size() == 1) {
    body(0, std::stop_token{});
  } else if (lists.size() > 1) {
    run_workers(lists.size(), body);
  }
}

void PosixBackend::sync(OpenFiles& open_files, Direction direction) {
  if (direction != Direction::write || settings_.sync == SyncPolicy::none) return;
  sync_all("posix", static_cast<Files&>(open_files).entries, settings_.sync);
}

void PosixBackend::close(OpenFiles& open_files) {
  close_all("posix", static_cast<Files&>(open_files).entries);
}

}  // namespace ckpt::backends::posix
