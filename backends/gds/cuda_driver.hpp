#pragma once

#include <cuda.h>

#include <string>

#include "backends/backend.hpp"
#include "backends/gds/shared_library.hpp"

namespace ckpt::backends::gds {

// The CUDA driver API functions the backend uses, typed by <cuda.h> and resolved from
// libcuda.so.1 at run time (linking libcuda would stop the binary from starting where there is
// no NVIDIA driver). cuFile itself needs the driver; the backend needs it to find a device, to
// check that device memory is device memory, and to make the buffer's context current on the
// threads that call cuFile.
struct CudaApi {
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDeviceGetCount) device_get_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuPointerGetAttribute) pointer_get_attribute = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
};

// libcuda.so.1, initialised, with at least one device. Move-only.
class CudaDriver {
 public:
  // Loads the driver and calls cuInit and cuDeviceGetCount. Throws std::invalid_argument saying
  // what is missing: "no NVIDIA driver: libcuda.so.1 not found (...)" or "no CUDA device: cuInit
  // returned CUDA_ERROR_NO_DEVICE (100)".
  static CudaDriver load();

  const CudaApi& api() const noexcept { return api_; }
  int device_count() const noexcept { return devices_; }
  // "CUDA_ERROR_INVALID_VALUE (1)".
  std::string error_text(CUresult result) const;

  // The calling thread's current context, or nullptr.
  CUcontext current_context() const;
  // Throws std::invalid_argument unless `memory` starts in CUDA device memory; returns the
  // context it belongs to (nullptr for allocations without one, such as memory pools).
  CUcontext device_memory_context(const MemoryView& memory) const;

 private:
  SharedLibrary library_;
  CudaApi api_;
  int devices_ = 0;
};

// The primary context of one device, retained for this object's lifetime. Move-only.
class PrimaryContext {
 public:
  PrimaryContext() = default;
  // Retains the primary context of device `ordinal`. Throws IoError when the driver refuses.
  PrimaryContext(const CudaDriver& driver, int ordinal);
  ~PrimaryContext();
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  CUcontext get() const noexcept { return context_; }

 private:
  void release() noexcept;

  const CudaApi* api_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// Makes `context` current on the calling thread for this scope and restores the previous one
// after; a nullptr context leaves the thread as it is. Throws IoError when the driver refuses.
class ContextScope {
 public:
  ContextScope(const CudaDriver& driver, CUcontext context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const CudaApi* api_ = nullptr;
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace ckpt::backends::gds
