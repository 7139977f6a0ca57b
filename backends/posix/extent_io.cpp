#include "backends/posix/extent_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "backends/backend.hpp"

namespace ckpt::backends::posix {
namespace {

// Largest request per system call. Linux moves at most 0x7ffff000 bytes per call anyway; a
// power of two keeps every later request aligned for O_DIRECT and lets a stop request be seen
// between calls.
constexpr std::uint64_t kMaxRequest = std::uint64_t{1} << 30;

std::size_t next_request(std::uint64_t remaining) {
  return static_cast<std::size_t>(std::min(remaining, kMaxRequest));
}

[[noreturn]] void throw_end_of_file(const ByteRun& run, std::uint64_t end) {
  throw IoError("posix: read " + *run.path + " at offset " + std::to_string(run.file_offset) +
                ", length " + std::to_string(run.length) +
                ": file shorter than the plan (end of file at byte " + std::to_string(end) + ")");
}

using Clock = std::chrono::steady_clock;

// Times one system call into `latency` (when given): the request's latency as the caller sees it.
template <class Call>
ssize_t timed(LatencyHistogram* latency, Call&& call) {
  if (latency == nullptr) return call();
  const auto start = Clock::now();
  const ssize_t moved = call();
  latency->record(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count()));
  return moved;
}

}  // namespace

void write_run(const ByteRun& run, std::stop_token stop, LatencyHistogram* latency) {
  std::uint64_t done = 0;
  while (done < run.length && !stop.stop_requested()) {
    const ssize_t moved = run.throttle([&] {
      return timed(latency, [&] {
        return ::pwrite(run.fd, run.memory + done, next_request(run.length - done),
                        static_cast<off_t>(run.file_offset + done));
      });
    });
    if (moved < 0 && errno == EINTR) continue;
    if (moved < 0) throw IoError("posix", "write", *run.path, errno, run.file_offset, run.length);
    // pwrite of a non-empty request never returns 0 on a regular file; if it did, retrying
    // would spin forever, so it counts as a short transfer.
    if (moved == 0) throw IoError("posix", "write", *run.path, 0, run.file_offset, run.length);
    done += static_cast<std::uint64_t>(moved);
  }
}

void read_run(const ByteRun& run, std::uint64_t direct_alignment, std::stop_token stop,
              LatencyHistogram* latency) {
  std::uint64_t done = 0;
  while (done < run.length && !stop.stop_requested()) {
    const std::size_t request = next_request(run.length - done);
    const ssize_t moved = run.throttle([&] {
      return timed(latency, [&] {
        return ::pread(run.fd, run.memory + done, request,
                       static_cast<off_t>(run.file_offset + done));
      });
    });
    if (moved < 0 && errno == EINTR) continue;
    if (moved < 0) throw IoError("posix", "read", *run.path, errno, run.file_offset, run.length);
    const bool whole = run.data_end != 0 &&
                       run.file_offset + done + static_cast<std::uint64_t>(moved) >= run.data_end;
    if (moved == 0 && !whole) throw_end_of_file(run, run.file_offset + done);
    done += static_cast<std::uint64_t>(moved);
    if (whole && static_cast<std::size_t>(moved) < request)
      return;  // the file's end, as FilePlan::data_end says
    // With O_DIRECT the next request would start unaligned (EINVAL); the short count can only
    // be the end of the file.
    if (direct_alignment != 0 && static_cast<std::size_t>(moved) < request &&
        done % direct_alignment != 0) {
      throw_end_of_file(run, run.file_offset + done);
    }
  }
}

}  // namespace ckpt::backends::posix
