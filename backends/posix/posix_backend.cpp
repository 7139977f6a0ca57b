#include "backends/posix/posix_backend.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/file_common/direct_checks.hpp"
#include "backends/file_common/mapped_file.hpp"
#include "backends/file_common/open_limit.hpp"
#include "backends/file_common/posix_file.hpp"
#include "backends/file_common/work_split.hpp"
#include "backends/file_common/workers.hpp"
#include "backends/posix/extent_io.hpp"
#include "backends/posix/posix_declaration.hpp"

namespace ckpt::backends::posix {
namespace {

using file_common::check_direct_memory;
using file_common::check_direct_plan;
using file_common::close_all;
using file_common::kPage;
using file_common::open_file;
using file_common::open_file_budget;
using file_common::Piece;
using file_common::PosixFile;
using file_common::reserve;
using file_common::run_workers;
using file_common::split_by_bytes;
using file_common::sync_all;
using file_common::sync_descriptor;
using file_common::validate_direct_alignment;

}  // namespace

class PosixBackend::Files final : public Backend::OpenFiles {
 public:
  struct Entry {
    std::string path;
    PosixFile file;
  };
  std::vector<Entry> entries;
  bool batched = false;  // more files than may be open at once: each batch is opened in transfer
  std::size_t batch = 0;
  int flags = 0;
};

PosixBackend::PosixBackend(const IoSettings& settings, const BackendOptions& options)
    : settings_(settings),
      throttle_(static_cast<int>(
          OptionValues("posix", option_table(), options).integer("throttle_percent"))) {
  validate_direct_alignment("posix", settings_);
}

Capabilities PosixBackend::capabilities() const {
  return declared_capabilities({"posix", option_table(), {}});
}

std::vector<std::string> PosixBackend::notes() const {
  if (batch_note_.empty()) return {};
  return {batch_note_};
}

std::unique_ptr<Backend::OpenFiles> PosixBackend::open(const IoPlan& plan, Direction direction) {
  if (settings_.direct) check_direct_plan("posix", plan, settings_.direct_alignment);
  const bool writing = direction == Direction::write;
  int flags = O_CLOEXEC | (writing ? O_WRONLY | O_CREAT : O_RDONLY);
  if (settings_.direct) flags |= O_DIRECT;

  auto files = std::make_unique<Files>();
  files->flags = flags;
  files->batch = open_file_budget();
  files->batched = plan.files.size() > files->batch;
  const std::string batch = std::to_string(files->batch);
  batch_note_ = files->batched
                    ? "posix: " + std::to_string(plan.files.size()) +
                          " files per plan, more than the " + batch +
                          " it keeps open at once (half the soft RLIMIT_NOFILE): opened, moved, " +
                          "synced and closed in batches of " + batch +
                          " in plan order, so open/sync/close time is partly in transfer"
                    : std::string();
  files->entries.reserve(plan.files.size());
  for (const FilePlan& file : plan.files) {
    PosixFile handle = open_file(file.path, flags);
    if (writing && settings_.fallocate)
      reserve(handle, file.path, file.reserve_offset, file.file_size);
    // Batched: created (or found) and reserved now, reopened by its batch in transfer.
    if (files->batched) {
      if (const int error = handle.close(); error != 0)
        throw IoError("posix", "close", file.path, error);
    }
    files->entries.push_back(Files::Entry{file.path, std::move(handle)});
  }
  return files;
}

void PosixBackend::transfer(OpenFiles& open_files, const IoPlan& plan, MemoryView memory,
                            Direction direction) {
  check_direct_memory("posix", plan, memory, settings_);
  auto& files = static_cast<Files&>(open_files);
  if (files.batched) {
    transfer_batched(files, plan, memory, direction);
    return;
  }
  std::vector<std::size_t> all(plan.files.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  move_pieces(files, all, plan, memory, direction);
}

// The files of `plan` (or a streamed part) that move bytes, `files.batch` at a time.
void PosixBackend::transfer_batched(Files& files, const IoPlan& plan, MemoryView memory,
                                    Direction direction) {
  for (const std::vector<std::size_t>& batch : file_common::busy_file_batches(plan, files.batch)) {
    IoPlan part;
    for (const std::size_t i : batch) {
      part.files.push_back(plan.files[i]);
      files.entries[i].file = open_file(files.entries[i].path, files.flags);
    }
    move_pieces(files, batch, part, memory, direction);
    for (const std::size_t i : batch) {
      Files::Entry& entry = files.entries[i];
      if (direction == Direction::write) {
        throttle_([&] {
          sync_descriptor(entry.file.fd(), "posix", entry.path, settings_.sync);
          return 0;
        });
      }
      if (const int error = entry.file.close(); error != 0)
        throw IoError("posix", "close", entry.path, error);
    }
  }
}

// Moves the extents of `plan`, whose file k is files.entries[entry_of[k]] (open).
void PosixBackend::move_pieces(Files& files, const std::vector<std::size_t>& entry_of,
                               const IoPlan& plan, MemoryView memory, Direction direction) {
  const std::uint64_t alignment = settings_.direct ? settings_.direct_alignment : 0;
  const std::uint64_t granule = settings_.direct ? alignment : kPage;
  const auto lists = split_by_bytes(plan, static_cast<std::size_t>(settings_.threads), granule);

  // One histogram per worker, merged after the join: no sharing in the request loop.
  std::vector<LatencyHistogram> latencies(settings_.request_latency ? lists.size() : 0);
  auto body = [&](std::size_t k, std::stop_token stop) {
    LatencyHistogram* latency = latencies.empty() ? nullptr : &latencies[k];
    for (const Piece& piece : lists[k]) {
      if (stop.stop_requested()) return;
      Files::Entry& entry = files.entries[entry_of[piece.file]];
      const ByteRun run{entry.file.fd(),   &entry.path,
                        piece.file_offset, memory.data + piece.memory_offset,
                        piece.length,      plan.files[piece.file].data_end,
                        throttle_};
      if (direction == Direction::write) {
        write_run(run, stop, latency);
      } else {
        read_run(run, alignment, stop, latency);
      }
    }
  };
  if (lists.size() == 1) {
    body(0, std::stop_token{});
  } else if (lists.size() > 1) {
    run_workers(lists.size(), body);
  }
  for (const LatencyHistogram& latency : latencies) add_request_latency(latency);
}

void PosixBackend::sync(OpenFiles& open_files, Direction direction) {
  if (direction != Direction::write || settings_.sync == SyncPolicy::none) return;
  auto& files = static_cast<Files&>(open_files);
  if (files.batched) return;  // each batch was synced in transfer
  throttle_([&] {
    sync_all("posix", files.entries, settings_.sync);
    return 0;
  });
}

void PosixBackend::close(OpenFiles& open_files) {
  close_all("posix", static_cast<Files&>(open_files).entries);
}

std::unique_ptr<MappedFile> PosixBackend::map_file(const std::string& path) {
  return file_common::map_whole_file("posix", path);
}

}  // namespace ckpt::backends::posix
