#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/options.hpp"
#include "backends/posix/throttle.hpp"

namespace ckpt::backends::posix {

// POSIX file I/O: open(2) with O_CREAT (never O_TRUNC), pwrite/pread loops, optional O_DIRECT,
// fallocate and fsync/fdatasync, and `threads` workers per transfer, each given a byte-balanced
// share of the plan's extents. Host and pinned memory only.
//
// fallocate reserves [0, file_size) of every file, shared ones included: mode 0 only fills
// holes and never changes bytes another writer has written, so every writer of a shared file
// may reserve it. A file_size of 0 reserves nothing.
//
// A plan with more files than file_common::open_file_budget() goes in batches of that many files,
// in plan order: open creates (and reserves) them a batch at a time and closes them again; each
// transfer reopens a batch, moves its extents, syncs (write) and closes it before the next, so
// at most a batch is open. Its open, sync and close times then fall partly in `transfer`.
class PosixBackend final : public Backend {
 public:
  // Throws std::invalid_argument naming the setting: `threads` < 1, `queue_depth` other than 1
  // (one request at a time per thread; use `threads`, or the uring backend for queues), or with
  // `direct`, a `direct_alignment` that is not a power of two in [512, 1 GiB]; or an option of
  // `options` that its table refuses (backend.posix.<key>, with what is expected).
  explicit PosixBackend(const IoSettings& settings, const BackendOptions& options = {});

  std::string_view name() const override { return "posix"; }
  Capabilities capabilities() const override;
  // Says when the last plan had more files than may be open at once
  // (file_common::open_file_budget).
  std::vector<std::string> notes() const override;

 protected:
  // Write: creates or opens every file (O_WRONLY|O_CREAT|O_CLOEXEC, 0644, never O_TRUNC) and
  // reserves it with `fallocate`; read: O_RDONLY|O_CLOEXEC. O_DIRECT with `direct`. With
  // `direct`, first checks that every extent's file offset and length are multiples of
  // `direct_alignment` (std::invalid_argument before any file is touched). Throws IoError.
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  // Rejects device memory and, with `direct`, memory addresses not aligned to
  // `direct_alignment` (std::invalid_argument before any byte moves). Then moves every extent,
  // on `threads` workers when there is more than one; the first error stops the others.
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  // Write: fsync or fdatasync every file (`sync`); none: nothing. Read: nothing.
  void sync(OpenFiles& files, Direction direction) override;
  // Closes every file, then throws IoError for the first close() that failed.
  void close(OpenFiles& files) override;
  std::unique_ptr<MappedFile> map_file(const std::string& path) override;

 private:
  class Files;
  void transfer_batched(Files& files, const IoPlan& plan, MemoryView memory, Direction direction);
  void move_pieces(Files& files, const std::vector<std::size_t>& entry_of, const IoPlan& plan,
                   MemoryView memory, Direction direction);

  IoSettings settings_;
  Throttle throttle_;
  std::string batch_note_;  // of the last plan opened
};

}  // namespace ckpt::backends::posix
