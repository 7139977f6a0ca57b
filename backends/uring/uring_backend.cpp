#include "backends/uring/uring_backend.hpp"

#include "backends/file_common/direct_checks.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backends/file_common/posix_file.hpp"
#include "backends/file_common/work_split.hpp"
#include "backends/file_common/workers.hpp"
#include "backends/uring/batch.hpp"
#include "backends/uring/ring.hpp"
#include "backends/uring/transfer_queue.hpp"

namespace ckpt::backends::uring {
namespace {

void validate(const IoSettings& settings) { file_common::validate_direct_alignment("uring", settings); }

IoError open_error(const std::string& path, int flags, int error) {
  const char* operation = (flags & O_ACCMODE) == O_RDONLY ? "open for reading" : "open for writing";
  if (error == EINVAL && (flags & O_DIRECT) != 0) {
    return IoError(std::string("uring: ") + operation + " " + path +
                   " with O_DIRECT: " + std::strerror(error) +
                   " — the file system refuses O_DIRECT; set `direct = false`");
  }
  return IoError("uring", operation, path, error);
}

IoError fallocate_error(const std::string& path, std::uint64_t size, int error) {
  if (error == EOPNOTSUPP) {
    return IoError("uring: fallocate " + path + " (" + std::to_string(size) +
                   " bytes): " + std::strerror(error) +
                   " — the file system cannot reserve space; set `fallocate = false`");
  }
  return IoError("uring", "fallocate", path, error, 0, size);
}

std::string buffer_note(int error) {
  std::string note = "uring: memory not registered as fixed buffers (io_uring_register_buffers: " +
                     std::string(std::strerror(error));
  if (error == ENOMEM || error == EPERM) {
    note += " — the locked-memory limit RLIMIT_MEMLOCK (`ulimit -l`) is likely too low";
  }
  return note + "); plain buffers used";
}

// Memory bytes [first, end) a worker's pieces touch.
std::pair<std::uint64_t, std::uint64_t> memory_span(const std::vector<file_common::Piece>& pieces) {
  std::uint64_t first = UINT64_MAX;
  std::uint64_t end = 0;
  for (const file_common::Piece& piece : pieces) {
    first = std::min(first, piece.memory_offset);
    end = std::max(end, piece.memory_offset + piece.length);
  }
  return {std::min(first, end), end};
}

}  // namespace

class UringBackend::Files final : public Backend::OpenFiles {
 public:
  struct Entry {
    std::string path;
    file_common::PosixFile file;
  };
  explicit Files(Ring control) : ring(std::move(control)) {}

  Ring ring;  // opens, fallocate, sync, and the first transfer worker
  std::vector<Entry> entries;
};

UringBackend::UringBackend(const IoSettings& settings, UringOptions options)
    : settings_(settings), options_(options) {
  validate(settings_);
  depth_ = static_cast<unsigned>(settings_.queue_depth);
  try {
    Ring probe(1, options_.sqpoll);  // io_uring disabled or absent: say so before any case runs
  } catch (const IoError& e) {
    throw std::invalid_argument(e.what());
  }
}

Capabilities UringBackend::capabilities() const { return declared_capabilities({"uring", option_table(), {}}); }

bool UringBackend::buffers_registered() const {
  const std::scoped_lock lock(mutex_);
  return buffers_registered_;
}

std::vector<std::string> UringBackend::notes() const {
  const std::scoped_lock lock(mutex_);
  return notes_;
}

void UringBackend::record(bool registered, std::vector<std::string> notes) {
  const std::scoped_lock lock(mutex_);
  buffers_registered_ = buffers_registered_ && registered;
  for (std::string& note : notes) {
    if (std::find(notes_.begin(), notes_.end(), note) == notes_.end())
      notes_.push_back(std::move(note));
  }
}

std::unique_ptr<Backend::OpenFiles> UringBackend::open(const IoPlan& plan, Direction direction) {
  {
    const std::scoped_lock lock(mutex_);
    buffers_registered_ = false;
    notes_.clear();
  }
  if (settings_.direct) file_common::check_direct_plan("uring", plan, settings_.direct_alignment);
  const bool writing = direction == Direction::write;
  int flags = O_CLOEXEC | (writing ? O_WRONLY | O_CREAT : O_RDONLY);
  if (settings_.direct) flags |= O_DIRECT;

  auto files = std::make_unique<Files>(Ring(depth_, options_.sqpoll));
  files->entries.resize(plan.files.size());
  std::optional<IoError> error;
  run_batch(
      files->ring, plan.files.size(), depth_,
      [&](io_uring_sqe* sqe, std::size_t i) {
        files->entries[i].path = plan.files[i].path;
        io_uring_prep_openat(sqe, AT_FDCWD, plan.files[i].path.c_str(), flags, 0644);
      },
      [&](std::size_t i, int result) {
        if (result >= 0) {
          files->entries[i].file = file_common::PosixFile(result);
        } else if (!error) {
          error = open_error(plan.files[i].path, flags, -result);
        }
        return !error;
      });
  if (error) throw *error;
  if (writing && settings_.fallocate) reserve_all(*files, plan);
  return files;
}

// fallocate mode 0 only fills holes and never changes bytes another writer has written, so
// every writer of a shared file may reserve it. A file_size of 0 reserves nothing.
void UringBackend::reserve_all(Files& files, const IoPlan& plan) {
  std::vector<std::size_t> sized;
  for (std::size_t i = 0; i < plan.files.size(); ++i) {
    if (plan.files[i].file_size > plan.files[i].reserve_offset) sized.push_back(i);
  }
  std::optional<IoError> error;
  run_batch(
      files.ring, sized.size(), depth_,
      [&](io_uring_sqe* sqe, std::size_t k) {
        const std::size_t i = sized[k];
        const FilePlan& f = plan.files[i];
        io_uring_prep_fallocate(sqe, files.entries[i].file.fd(), 0, static_cast<off_t>(f.reserve_offset),
                                static_cast<off_t>(f.file_size - f.reserve_offset));
      },
      [&](std::size_t k, int result) {
        if (result < 0 && !error) {
          error =
              fallocate_error(plan.files[sized[k]].path, plan.files[sized[k]].file_size, -result);
        }
        return !error;
      });
  if (error) throw *error;
}

void UringBackend::transfer(OpenFiles& open_files, const IoPlan& plan, MemoryView memory,
                            Direction direction) {
  file_common::check_direct_memory("uring", plan, memory, settings_);
  auto& files = static_cast<Files&>(open_files);
  const std::uint64_t alignment = settings_.direct ? settings_.direct_alignment : 0;
  const std::uint64_t granule = settings_.direct ? alignment : file_common::kPage;
  const auto lists =
      file_common::split_by_bytes(plan, static_cast<std::size_t>(settings_.threads), granule);
  {
    const std::scoped_lock lock(mutex_);
    buffers_registered_ = !lists.empty();
  }
  std::vector<int> fds;
  std::vector<FileTarget> plain;
  for (const Files::Entry& entry : files.entries) {
    fds.push_back(entry.file.fd());
    plain.push_back(FileTarget{entry.file.fd(), -1, &entry.path});
  }

  // One histogram per worker, merged after the join: no sharing in the request loop.
  std::vector<LatencyHistogram> latencies(settings_.request_latency ? lists.size() : 0);
  auto body = [&](std::size_t k, std::stop_token stop) {
    std::optional<Ring> own;
    if (k > 0) own.emplace(depth_, options_.sqpoll);
    Ring& ring = k == 0 ? files.ring : *own;
    std::vector<std::string> notes;

    std::vector<FileTarget> targets = plain;
    if (options_.register_files) {
      if (const int error = register_files(ring, fds); error == 0) {
        for (std::size_t i = 0; i < targets.size(); ++i) targets[i].fixed = static_cast<int>(i);
      } else {
        notes.push_back("uring: files not registered (io_uring_register_files: " +
                        std::string(std::strerror(error)) + "); descriptors used");
      }
    }
    TransferJob job{&lists[k], &targets, memory.data, direction == Direction::write,
                    alignment, depth_,   {}};
    if (options_.register_buffers) {
      const auto [first, end] = memory_span(lists[k]);
      job.buffers = register_buffers(ring, memory.data + first, memory.data + end);
      if (!job.buffers.registered) notes.push_back(buffer_note(job.buffers.error));
    } else {
      notes.push_back(
          "uring: memory not registered as fixed buffers (UringOptions::register_buffers = "
          "false); plain buffers used");
    }
    record(job.buffers.registered, std::move(notes));
    job.latency = latencies.empty() ? nullptr : &latencies[k];
    TransferQueue(ring, job).run(stop);
  };
  if (lists.size() == 1) {
    body(0, std::stop_token{});
  } else if (lists.size() > 1) {
    file_common::run_workers(lists.size(), body);
  }
  for (const LatencyHistogram& latency : latencies) add_request_latency(latency);
}

void UringBackend::sync(OpenFiles& open_files, Direction direction) {
  if (direction != Direction::write || settings_.sync == SyncPolicy::none) return;
  auto& files = static_cast<Files&>(open_files);
  const bool data_only = settings_.sync == SyncPolicy::fdatasync;
  std::optional<IoError> error;
  run_batch(
      files.ring, files.entries.size(), depth_,
      [&](io_uring_sqe* sqe, std::size_t i) {
        io_uring_prep_fsync(sqe, files.entries[i].file.fd(), data_only ? IORING_FSYNC_DATASYNC : 0);
      },
      [&](std::size_t i, int result) {
        if (result < 0 && !error) {
          error =
              IoError("uring", data_only ? "fdatasync" : "fsync", files.entries[i].path, -result);
        }
        return !error;
      });
  if (error) throw *error;
}

void UringBackend::close(OpenFiles& open_files) {
  file_common::close_all("uring", static_cast<Files&>(open_files).entries);
}

}  // namespace ckpt::backends::uring
