#pragma once

// measure.calibration: the machine's plain sequential write (+ the case's sync) and read of a
// case's bytes, measured in the same run as the case and alternated with its iterations, so
// that `ckptbench gate` can judge the case against a peer that saw the same noise.
#include <cstdint>
#include <filesystem>
#include <string>

#include "backends/backend.hpp"
#include "harness/comm/comm.hpp"
#include "harness/memory/host_buffer.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// Aggregate seconds of one calibration sample (IOR's method: barrier, then the slowest process).
struct CalibrationSample {
  double write_seconds = 0;
  double read_seconds = 0;  // 0 when the read was not asked for
};

// One process's calibration file under `directory` (process 0 makes the directory). Collective:
// every process constructs it, calls measure() and finish() in the same order.
class Calibration {
 public:
  // `source`: host memory of at least `bytes` to write from and read back into (the bytes read
  // are the bytes written, so the case's data stays intact); empty or device memory: the
  // calibration allocates its own pre-touched host buffer.
  Calibration(std::filesystem::path directory, std::uint64_t bytes, backends::MemoryView source,
              Comm& comm);
  ~Calibration();  // removes this process's file if finish() did not run (never collective)
  Calibration(const Calibration&) = delete;
  Calibration& operator=(const Calibration&) = delete;

  // One write of the file and, when `read`, its read after `policy` (read_shift: fadvise, as
  // there is no other process's file to read). Throws std::runtime_error naming the file and the
  // failed call, on every process when any process failed.
  CalibrationSample measure(const backends::IoSettings& io, CachePolicy policy, bool read);
  // Removes every process's file and the directory. Collective.
  void finish();

  std::uint64_t bytes() const { return bytes_; }

 private:
  std::filesystem::path directory_;
  std::filesystem::path file_;
  std::uint64_t bytes_ = 0;
  Comm& comm_;
  HostBuffer own_;
  std::byte* data_ = nullptr;
  bool finished_ = false;
};

}  // namespace ckpt::harness
