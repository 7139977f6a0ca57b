#pragma once

#include <cstddef>
#include <cstdint>
#include <stop_token>
#include <string>

#include "backends/latency_histogram.hpp"
#include "backends/posix/throttle.hpp"

namespace ckpt::backends::posix {

// Where one run of bytes goes: an open descriptor (with its path for messages), a file offset,
// memory and a length.
struct ByteRun {
  int fd = -1;
  const std::string* path = nullptr;
  std::uint64_t file_offset = 0;
  std::byte* memory = nullptr;
  std::uint64_t length = 0;
  std::uint64_t data_end = 0;  // FilePlan::data_end: a read reaching this file offset is whole
  Throttle throttle;           // applied to every pwrite/pread call
};

// Writes the whole run with pwrite, continuing after short writes and EINTR. Returns early,
// without error, once `stop` is requested (another worker failed). Throws IoError naming the
// path, offset and length. With `latency`, each pwrite call's time goes into it.
void write_run(const ByteRun& run, std::stop_token stop, LatencyHistogram* latency = nullptr);

// Reads the whole run with pread, like write_run. End of file before the run is complete is
// an IoError ("file shorter than the plan"), unless the run has reached `data_end`.
// `direct_alignment` is the O_DIRECT alignment, or 0 for buffered reads: an O_DIRECT read that
// stops at an unaligned count has met end of file.
void read_run(const ByteRun& run, std::uint64_t direct_alignment, std::stop_token stop,
              LatencyHistogram* latency = nullptr);

}  // namespace ckpt::backends::posix
