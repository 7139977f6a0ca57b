#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/file_common/work_split.hpp"
#include "backends/uring/ring.hpp"

namespace ckpt::backends::uring {

// Largest request, and the size of one registered buffer: the kernel accepts fixed buffers of
// at most 1 GiB, and requests are cut at every 1-GiB-aligned address, so a request never
// straddles two registered buffers and an aligned O_DIRECT request stays aligned when cut.
constexpr std::uint64_t kChunk = std::uint64_t{1} << 30;

// A file as the transfer queue addresses it.
struct FileTarget {
  int fd = -1;
  int fixed = -1;  // index in the ring's registered files, or -1: use fd
  const std::string* path = nullptr;
  std::uint64_t data_end = 0;  // FilePlan::data_end: a read reaching this file offset is whole
};

// Memory registered as fixed buffers on one ring: buffer i covers the part of the registered
// range inside the 1-GiB-aligned address chunk first_chunk + i.
struct BufferRegistration {
  bool registered = false;
  std::uint64_t first_chunk = 0;
  int error = 0;  // errno of io_uring_register_buffers when it failed; 0 when not tried
};

// Registers memory [begin, end) on `ring`, one iovec per 1-GiB-aligned chunk. Failure (a
// memlock limit: ENOMEM; EPERM; memory the kernel cannot pin: EFAULT, EOPNOTSUPP) is reported
// in the result, not thrown: the caller falls back to unregistered buffers.
BufferRegistration register_buffers(Ring& ring, std::byte* begin, std::byte* end);

// Registers the descriptors as fixed files; returns 0 or the errno it failed with.
int register_files(Ring& ring, const std::vector<int>& fds);

// What one worker moves through its ring.
struct TransferJob {
  const std::vector<file_common::Piece>* pieces = nullptr;  // Piece::file indexes `files`
  const std::vector<FileTarget>* files = nullptr;
  std::byte* memory = nullptr;  // Piece::memory_offset is relative to this
  bool write = true;
  std::uint64_t direct_alignment = 0;  // O_DIRECT alignment, 0 for buffered I/O
  unsigned depth = 1;                  // requests in flight
  BufferRegistration buffers;
  LatencyHistogram* latency = nullptr;  // measure.latency: each SQE's submission -> completion
};

// Moves every piece of a job with up to `depth` requests in flight. Each request lives in a
// slot; the slot index travels in user_data, completions may arrive in any order, and freed
// slots are recycled from a free list. Short transfers are resubmitted for the remainder.
// The first error (res < 0: path, offset, length and errno text; a read meeting end of file:
// "file shorter than the plan", unless it reached the file's data_end), or a stop request from
// another worker, stops submission;
// requests still in flight are reaped before run() returns or throws IoError, so no request
// outlives the call. With a latency histogram, every completion records the time from the
// io_uring_submit() that handed its SQE to the kernel to the reaping of its CQE.
class TransferQueue {
 public:
  TransferQueue(Ring& ring, const TransferJob& job);
  void run(std::stop_token stop);

 private:
  struct Slot {
    std::size_t piece = 0;
    std::uint64_t start = 0;                            // request's first byte within the piece
    std::uint64_t length = 0;                           // request's bytes
    std::uint64_t done = 0;                             // bytes already moved (short transfers)
    std::chrono::steady_clock::time_point submitted{};  // with a latency histogram
  };

  bool take_next(Slot& slot);
  void prepare(unsigned slot);
  void complete(unsigned slot, int result);
  void fail(const Slot& slot, int error);
  void fail_end_of_file(const Slot& slot);
  bool reached_data_end(const Slot& slot) const;  // a read at or past its file's data_end

  Ring& ring_;
  const TransferJob& job_;
  std::vector<Slot> slots_;
  std::vector<unsigned> free_;      // slots not in use
  std::vector<unsigned> resubmit_;  // slots whose request continues after a short transfer
  std::size_t next_piece_ = 0;
  std::uint64_t next_offset_ = 0;  // within next_piece_
  std::optional<IoError> error_;
};

}  // namespace ckpt::backends::uring
