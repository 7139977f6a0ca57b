#include "backends/uring/uring_backend.hpp"

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

#include "backends/file_common/direct_checks.hpp"
#include "backends/file_common/mapped_file.hpp"
#include "backends/file_common/open_limit.hpp"
#include "backends/file_common/posix_file.hpp"
#include "backends/file_common/work_split.hpp"
#include "backends/file_common/workers.hpp"
#include "backends/uring/batch.hpp"
#include "backends/uring/ring.hpp"
#include "backends/uring/transfer_queue.hpp"

namespace ckpt::backends::uring {
namespace {

void validate(const IoSettings& settings) {
  file_common::validate_direct_alignment("uring", settings);
}

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
  bool batched = false;  // more files than may be open at once: each batch is opened in transfer
  std::size_t batch = 0;
  int flags = 0;
};

namespace {

std::vector<std::size_t> first_indices(std::size_t n) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  return all;
}

// Closes the files in `which`, all of them even after a failure; throws for the first failure.
template <typename Entries>
void close_entries(Entries& entries, const std::vector<std::size_t>& which) {
  int failed_errno = 0;
  const std::string* failed = nullptr;
  for (const std::size_t i : which) {
    if (const int error = entries[i].file.close(); error != 0 && failed == nullptr) {
      failed = &entries[i].path;
      failed_errno = error;
    }
  }
  if (failed != nullptr) throw IoError("uring", "close", *failed, failed_errno);
}

}  // namespace

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

Capabilities UringBackend::capabilities() const {
  return declared_capabilities({"uring", option_table(), {}});
}

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
  for (std::size_t i = 0; i < plan.files.size(); ++i) files->entries[i].path = plan.files[i].path;
  files->flags = flags;
  files->batch = file_common::open_file_budget();
  files->batched = plan.files.size() > files->batch;
  if (!files->batched) {
    const std::vector<std::size_t> all = first_indices(plan.files.size());
    open_entries(*files, plan, all);
    if (writing && settings_.fallocate) reserve_all(*files, plan, all);
    return files;
  }
  const std::string batch = std::to_string(files->batch);
  record(false, {"uring: " + std::to_string(plan.files.size()) + " files per plan, more than the " +
                 batch +
                 " it keeps open at once (half the soft RLIMIT_NOFILE): opened, moved, synced and "
                 "closed in batches "
                 "of " +
                 batch + " in plan order, so open/sync/close time is partly in transfer"});
  // Created (or found) and reserved now, a batch at a time; reopened by their batch in transfer.
  for (std::size_t begin = 0; begin < plan.files.size(); begin += files->batch) {
    std::vector<std::size_t> which;
    for (std::size_t i = begin; i < std::min(plan.files.size(), begin + files->batch); ++i)
      which.push_back(i);
    open_entries(*files, plan, which);
    if (writing && settings_.fallocate) reserve_all(*files, plan, which);
    close_entries(files->entries, which);
  }
  return files;
}

void UringBackend::open_entries(Files& files, const IoPlan& plan,
                                const std::vector<std::size_t>& which) {
  std::optional<IoError> error;
  run_batch(
      files.ring, which.size(), depth_,
      [&](io_uring_sqe* sqe, std::size_t k) {
        io_uring_prep_openat(sqe, AT_FDCWD, plan.files[which[k]].path.c_str(), files.flags, 0644);
      },
      [&](std::size_t k, int result) {
        if (result >= 0) {
          files.entries[which[k]].file = file_common::PosixFile(result);
        } else if (!error) {
          error = open_error(plan.files[which[k]].path, files.flags, -result);
        }
        return !error;
      });
  if (error) throw *error;
}

// fallocate mode 0 only fills holes and never changes bytes another writer has written, so
// every writer of a shared file may reserve it. A file_size of 0 reserves nothing.
void UringBackend::reserve_all(Files& files, const IoPlan& plan,
                               const std::vector<std::size_t>& which) {
  std::vector<std::size_t> sized;
  for (const std::size_t i : which) {
    if (plan.files[i].file_size > plan.files[i].reserve_offset) sized.push_back(i);
  }
  std::optional<IoError> error;
  run_batch(
      files.ring, sized.size(), depth_,
      [&](io_uring_sqe* sqe, std::size_t k) {
        const std::size_t i = sized[k];
        const FilePlan& f = plan.files[i];
        io_uring_prep_fallocate(sqe, files.entries[i].file.fd(), 0,
                                static_cast<off_t>(f.reserve_offset),
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
  if (!files.batched) {
    move_pieces(files, plan, first_indices(plan.files.size()), memory, direction);
    return;
  }
  for (const std::vector<std::size_t>& batch : file_common::busy_file_batches(plan, files.batch)) {
    IoPlan part;
    for (const std::size_t i : batch) part.files.push_back(plan.files[i]);
    open_entries(files, plan, batch);
    try {
      move_pieces(files, part, batch, memory, direction);
      if (direction == Direction::write && settings_.sync != SyncPolicy::none)
        sync_entries(files, batch);
    } catch (...) {
      for (const std::size_t i : batch) files.entries[i].file.close();
      throw;
    }
    close_entries(files.entries, batch);
  }
}

void UringBackend::move_pieces(Files& files, const IoPlan& plan,
                               const std::vector<std::size_t>& entry_of, MemoryView memory,
                               Direction direction) {
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
  for (const std::size_t i : entry_of) {
    const Files::Entry& entry = files.entries[i];
    fds.push_back(entry.file.fd());
    plain.push_back(
        FileTarget{entry.file.fd(), -1, &entry.path, plan.files[plain.size()].data_end});
  }

  // Every worker's ring is made here, before the workers start, and goes after they are joined.
  // liburing maps and unmaps rings with raw system calls that ThreadSanitizer cannot see, so a
  // ring a worker made and unmapped itself while its siblings ran could be mapped again, at the
  // same address, by a sibling: TSan then took two unrelated mappings for one memory written by
  // two threads without synchronisation (the report once suppressed in ci/tsan.supp). Made and
  // removed by this thread, each mapping's users are ordered by thread start and join.
  std::vector<Ring> worker_rings;
  for (std::size_t k = 1; k < lists.size(); ++k) worker_rings.emplace_back(depth_, options_.sqpoll);

  // One histogram per worker, merged after the join: no sharing in the request loop.
  std::vector<LatencyHistogram> latencies(settings_.request_latency ? lists.size() : 0);
  auto body = [&](std::size_t k, std::stop_token stop) {
    Ring& ring = k == 0 ? files.ring : worker_rings[k - 1];
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
  if (files.batched) return;  // each batch was synced in transfer
  sync_entries(files, first_indices(files.entries.size()));
}

void UringBackend::sync_entries(Files& files, const std::vector<std::size_t>& which) {
  const bool data_only = settings_.sync == SyncPolicy::fdatasync;
  std::optional<IoError> error;
  run_batch(
      files.ring, which.size(), depth_,
      [&](io_uring_sqe* sqe, std::size_t k) {
        io_uring_prep_fsync(sqe, files.entries[which[k]].file.fd(),
                            data_only ? IORING_FSYNC_DATASYNC : 0);
      },
      [&](std::size_t k, int result) {
        if (result < 0 && !error) {
          error = IoError("uring", data_only ? "fdatasync" : "fsync", files.entries[which[k]].path,
                          -result);
        }
        return !error;
      });
  if (error) throw *error;
}

void UringBackend::close(OpenFiles& open_files) {
  file_common::close_all("uring", static_cast<Files&>(open_files).entries);
}

std::unique_ptr<MappedFile> UringBackend::map_file(const std::string& path) {
  return file_common::map_whole_file("uring", path);
}

}  // namespace ckpt::backends::uring
