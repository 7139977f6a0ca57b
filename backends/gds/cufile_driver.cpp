#include "backends/gds/cufile_driver.hpp"

#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace ckpt::backends::gds {
namespace {

// The nvidia-fs kernel module publishes its state here; without it cuFile can only run in
// compatibility mode.
constexpr const char* kNvidiaFsProc = "/proc/driver/nvidia-fs";

bool flag_set(unsigned int flags, unsigned int bit) {
  return (flags & (1u << bit)) != 0;
}

}  // namespace

DriverMode describe_mode(const std::optional<CUfileDrvProps_t>& properties, bool nvidia_fs_loaded,
                         std::optional<bool> forced) {
  DriverMode mode;
  if (properties) mode.max_batch = properties->max_batch_io_size;
  if (forced.value_or(false)) {
    mode.description = "cuFile compatibility mode: forced by configuration (force_compat_mode)";
  } else if (!nvidia_fs_loaded) {
    mode.description = "cuFile compatibility mode: nvidia-fs not loaded";
  } else {
    mode.compatibility = false;
    mode.description = "cuFile GPUDirect Storage through nvidia-fs";
    if (properties) {
      mode.description += " " + std::to_string(properties->nvfs.major_version) + "." +
                          std::to_string(properties->nvfs.minor_version);
      if (flag_set(properties->nvfs.dcontrolflags, CU_FILE_ALLOW_COMPAT_MODE)) {
        mode.description += " (compatibility mode allowed for files it cannot serve)";
      }
    }
  }
  return mode;
}

CufileDriver::CufileDriver(const CufileApi& api) : api_(&api) {
  const CUfileError_t status = api_->driver_open();
  if (status.err != CU_FILE_SUCCESS) {
    api_ = nullptr;
    std::string message = "gds: cuFileDriverOpen failed: " + cufile_error_text(status);
    if (status.err == CU_FILE_DRIVER_NOT_INITIALIZED) {
      message += "; point CUFILE_ENV_PATH_JSON at a cufile.json with \"allow_compat_mode\": true";
    }
    throw std::invalid_argument(message);
  }
}

CufileDriver::~CufileDriver() {
  close();
}

CufileDriver::CufileDriver(CufileDriver&& other) noexcept
    : api_(std::exchange(other.api_, nullptr)) {}

CufileDriver& CufileDriver::operator=(CufileDriver&& other) noexcept {
  if (this != &other) {
    close();
    api_ = std::exchange(other.api_, nullptr);
  }
  return *this;
}

void CufileDriver::close() noexcept {
  if (api_ != nullptr) api_->driver_close();  // nothing to report from a destructor
  api_ = nullptr;
}

DriverMode CufileDriver::mode() const {
  std::optional<CUfileDrvProps_t> properties;
  CUfileDrvProps_t props{};
  if (api_->driver_get_properties(&props).err == CU_FILE_SUCCESS) properties = props;
  std::optional<bool> forced;
  bool value = false;
  if (api_->get_parameter_bool != nullptr &&
      api_->get_parameter_bool(CUFILE_PARAM_FORCE_COMPAT_MODE, &value).err == CU_FILE_SUCCESS) {
    forced = value;
  }
  std::error_code error;
  const bool nvidia_fs = std::filesystem::exists(kNvidiaFsProc, error);
  return describe_mode(properties, nvidia_fs, forced);
}

}  // namespace ckpt::backends::gds
