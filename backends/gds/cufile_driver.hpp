#pragma once

#include <cufile.h>

#include <optional>
#include <string>

#include "backends/gds/cufile_api.hpp"

namespace ckpt::backends::gds {

// How cuFile moves data in this process, as far as the library and the system tell.
struct DriverMode {
  bool compatibility = true;  // POSIX I/O through host bounce buffers: no GPUDirect path
  std::string
      description;  // one line for notes(), e.g. "cuFile compatibility mode: nvidia-fs not loaded"
  unsigned max_batch = 0;  // max_batch_io_size of the driver; 0 when unknown
};

// What decides the mode, gathered by CufileDriver::mode() and kept apart so that the decision
// can be tested without a GPU. `properties` is empty when cuFileDriverGetProperties failed;
// `forced` is force_compat_mode when the library can say.
DriverMode describe_mode(const std::optional<CUfileDrvProps_t>& properties, bool nvidia_fs_loaded,
                         std::optional<bool> forced);

// cuFileDriverOpen for this object's lifetime and cuFileDriverClose after it (cuFile counts
// the opens of a process, so several backends may hold one each). Move-only.
class CufileDriver {
 public:
  // Throws std::invalid_argument with cuFile's reason, e.g. nvidia-fs missing while
  // allow_compat_mode is false, saying how to allow compatibility mode.
  explicit CufileDriver(const CufileApi& api);
  ~CufileDriver();
  CufileDriver(CufileDriver&& other) noexcept;
  CufileDriver& operator=(CufileDriver&& other) noexcept;
  CufileDriver(const CufileDriver&) = delete;
  CufileDriver& operator=(const CufileDriver&) = delete;

  // Reads the driver's properties, /proc/driver/nvidia-fs and force_compat_mode.
  DriverMode mode() const;

 private:
  void close() noexcept;

  const CufileApi* api_ = nullptr;
};

}  // namespace ckpt::backends::gds
