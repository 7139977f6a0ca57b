#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/uring/uring_declaration.hpp"

namespace ckpt::backends::uring {

// Choices IoSettings has no key for (yet); tests set them directly.
struct UringOptions {
  bool sqpoll = false;  // rings with a kernel submission-polling thread (IORING_SETUP_SQPOLL)
  bool register_buffers = true;  // false: never register the memory (exercises the fallback)
  bool register_files = true;    // false: address files by descriptor, not as fixed files
};

// Linux io_uring through liburing. Each write or read gets its own rings; nothing outlives
// the call:
// - open: every file is opened through the ring (IORING_OP_OPENAT, up to `queue_depth` at a
//   time): O_WRONLY|O_CREAT|O_CLOEXEC, 0644, never O_TRUNC, for write; O_RDONLY|O_CLOEXEC for
//   read; O_DIRECT with `direct`; with `fallocate`, IORING_OP_FALLOCATE (mode 0) reserves
//   [0, file_size) of each file, like posix.
// - transfer: the extents are split over `threads` workers by bytes (as posix does); each
//   worker has its own ring with up to `queue_depth` reads or writes in flight, registers the
//   memory it touches as fixed buffers and the files as fixed files, and falls back to plain
//   buffers or descriptors when the kernel refuses (a memlock limit); the fallback is
//   recorded in notes() and buffers_registered().
// - sync: one IORING_OP_FSYNC (IORING_FSYNC_DATASYNC for fdatasync) per file, up to
//   `queue_depth` in flight; close: close(2).
// Host and pinned memory only.
class UringBackend final : public Backend {
 public:
  // Throws std::invalid_argument naming the setting: `threads` < 1, `queue_depth` outside
  // [1, kMaxQueueDepth], with `direct` a `direct_alignment` that is not a power of two in
  // [512, 1 GiB]; and when io_uring cannot be used here (disabled by kernel.io_uring_disabled,
  // absent, refused), saying so and how to enable it or to use backend "posix".
  explicit UringBackend(const IoSettings& settings, UringOptions options = {});

  static constexpr int kMaxQueueDepth = uring::kMaxQueueDepth;

  std::string_view name() const override { return "uring"; }
  Capabilities capabilities() const override;

  // Whether the last write or read moved its bytes through registered (fixed) buffers on every
  // worker's ring. False before the first transfer and for a plan of zero bytes.
  bool buffers_registered() const;
  // What the last write or read fell back from (registration refused, …), one line each.
  std::vector<std::string> notes() const override;

 protected:
  // With `direct`, first checks every extent's file offset and length against
  // `direct_alignment` (std::invalid_argument before any file is touched). Opens or creates
  // every file through the ring; throws IoError naming the first path that failed (EINVAL with
  // O_DIRECT: the file system refuses O_DIRECT, set `direct = false`).
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  // Rejects, with `direct`, memory addresses not aligned to `direct_alignment`
  // (std::invalid_argument before any byte moves). Then moves every extent; the first error
  // stops every worker, and each worker reaps its requests in flight before returning.
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  // Write: fsync or fdatasync every file through the ring (`sync`); none: nothing. Read: nothing.
  void sync(OpenFiles& files, Direction direction) override;
  // More files than file_common::open_file_budget() (half the soft RLIMIT_NOFILE): open creates
  // them and closes them again; transfer opens, moves, syncs and closes them a batch at a time.
  // Closes every file, then throws IoError for the first close() that failed.
  void close(OpenFiles& files) override;
  std::unique_ptr<MappedFile> map_file(const std::string& path) override;

 private:
  class Files;

  // Files of `plan` listed in `which`: opened (or created) through the ring, reserved, synced.
  void open_entries(Files& files, const IoPlan& plan, const std::vector<std::size_t>& which);
  void reserve_all(Files& files, const IoPlan& plan, const std::vector<std::size_t>& which);
  void sync_entries(Files& files, const std::vector<std::size_t>& which);
  // Moves the extents of `part`, whose file k is files.entries[entry_of[k]] (open).
  void move_pieces(Files& files, const IoPlan& part, const std::vector<std::size_t>& entry_of,
                   MemoryView memory, Direction direction);
  void record(bool registered, std::vector<std::string> notes);

  IoSettings settings_;
  UringOptions options_;
  unsigned depth_ = 1;

  mutable std::mutex mutex_;  // guards what workers record
  bool buffers_registered_ = false;
  std::vector<std::string> notes_;
};

}  // namespace ckpt::backends::uring
