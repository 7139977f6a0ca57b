#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/gds/cuda_driver.hpp"
#include "backends/gds/cufile_api.hpp"
#include "backends/gds/cufile_driver.hpp"
#include "backends/gds/cufile_io.hpp"
#include "backends/gds/gds_options.hpp"

namespace ckpt::backends::gds {

// Why the backend cannot run here with `options`, or "" when it can: libcufile not found or not
// a cuFile library, no NVIDIA driver (libcuda.so.1), or no CUDA device. Loads both libraries
// and initialises the CUDA driver; opens no cuFile driver. Options other than `library` are
// not looked at (the constructor checks them).
std::string unavailable_reason(const BackendOptions& options);

// NVIDIA GPUDirect Storage through cuFile, loaded at run time (see backends/README.md):
// - construction: loads libcufile (GdsOptions::library, $CKPT_CUFILE_LIBRARY) and libcuda,
//   opens the cuFile driver for the instance's lifetime and records its mode: GPUDirect through
//   nvidia-fs, or compatibility mode (POSIX I/O through bounce buffers) when nvidia-fs is not
//   loaded or the configuration forces it.
// - open: open(2) every file (O_WRONLY|O_CREAT|O_CLOEXEC, 0644, never O_TRUNC; O_RDONLY for
//   read; O_DIRECT with `direct`), fallocate like posix, then cuFileHandleRegister.
// - transfer: device memory is checked to be CUDA memory and, with `register_buffers`,
//   registered with cuFileBufRegister for the call; the extents are split over `threads`
//   workers by bytes (as posix does), each with the buffer's CUDA context current, and moved
//   with cuFileWrite/cuFileRead in requests of at most 1 GiB, or `queue_depth` at a time through
//   the batch API with `batch`.
// - sync: fsync/fdatasync on the descriptors; close: cuFileHandleDeregister, then close(2).
// Host and pinned memory are accepted too: cuFile reads and writes them without a GPUDirect
// path (noted), so the numbers are not GDS numbers.
class GdsBackend final : public Backend {
 public:
  // Throws std::invalid_argument: a setting it cannot honour (`threads` < 1, `sqpoll`,
  // `queue_depth` other than 1 without `batch` or above the driver's batch size with it, a bad
  // `direct_alignment`), or the reason the backend cannot run here (unavailable_reason's
  // texts, or cuFileDriverOpen's refusal).
  GdsBackend(const IoSettings& settings, const GdsOptions& options);
  ~GdsBackend() override;

  std::string_view name() const override { return "gds"; }
  Capabilities capabilities() const override;
  // The library and driver mode, then what the last write or read fell back from.
  std::vector<std::string> notes() const override;

  const DriverMode& mode() const noexcept { return mode_; }
  const std::string& library_path() const noexcept { return library_.path(); }
  // Whether writes and reads go through the batch API (requested and present).
  bool batching() const noexcept { return batch_; }

 protected:
  // With `direct`, first checks every extent's file offset and length against
  // `direct_alignment` (std::invalid_argument before any file is touched). Throws IoError.
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  // With `direct`, rejects unaligned memory addresses; rejects a device view that is not CUDA
  // memory (std::invalid_argument before any byte moves). Throws IoError on the first failure.
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  void sync(OpenFiles& files, Direction direction) override;
  void close(OpenFiles& files) override;

 private:
  // Requests per cuFile batch: what the driver reports, else cuFile's documented default.
  unsigned max_batch() const;

  class Files;

  CUcontext context_for(const MemoryView& memory);
  BufferRegistration register_buffer(const MemoryView& memory);
  void move_requests(const std::vector<Request>& requests, std::byte* base, bool writing,
                     std::stop_token stop);
  void note(std::string line);

  IoSettings settings_;
  GdsOptions options_;
  CufileLibrary library_;
  CudaDriver cuda_;
  CufileDriver driver_;  // after library_: closed before the library handle goes
  DriverMode mode_;
  bool batch_ = false;
  std::vector<std::string> fixed_notes_;
  std::optional<PrimaryContext>
      fallback_context_;  // device 0, when a view has no context of its own

  mutable std::mutex mutex_;  // guards notes_, which workers append to
  std::vector<std::string> notes_;
};

}  // namespace ckpt::backends::gds
