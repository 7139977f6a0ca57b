#include "backends/gds/cuda_driver.hpp"

#include <stdexcept>
#include <utility>

// The exported name of a driver function: <cuda.h> maps some names to versioned symbols
// (cuDevicePrimaryCtxRelease -> cuDevicePrimaryCtxRelease_v2), and the string must follow.
#define CKPT_GDS_SYMBOL_TEXT(name) #name
#define CKPT_GDS_SYMBOL(name) CKPT_GDS_SYMBOL_TEXT(name)

namespace ckpt::backends::gds {
namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

void bind_all(const SharedLibrary& library, CudaApi& api) {
  bool ok = library.bind(api.init, CKPT_GDS_SYMBOL(cuInit));
  ok = library.bind(api.device_get_count, CKPT_GDS_SYMBOL(cuDeviceGetCount)) && ok;
  ok = library.bind(api.device_get, CKPT_GDS_SYMBOL(cuDeviceGet)) && ok;
  ok = library.bind(api.primary_ctx_retain, CKPT_GDS_SYMBOL(cuDevicePrimaryCtxRetain)) && ok;
  ok = library.bind(api.primary_ctx_release, CKPT_GDS_SYMBOL(cuDevicePrimaryCtxRelease)) && ok;
  ok = library.bind(api.ctx_get_current, CKPT_GDS_SYMBOL(cuCtxGetCurrent)) && ok;
  ok = library.bind(api.ctx_set_current, CKPT_GDS_SYMBOL(cuCtxSetCurrent)) && ok;
  ok = library.bind(api.pointer_get_attribute, CKPT_GDS_SYMBOL(cuPointerGetAttribute)) && ok;
  ok = library.bind(api.get_error_name, CKPT_GDS_SYMBOL(cuGetErrorName)) && ok;
  if (!ok) {
    throw std::invalid_argument(std::string("no usable NVIDIA driver: ") + library.path() +
                                " lacks CUDA driver API functions (driver older than CUDA 12?)");
  }
}

}  // namespace

CudaDriver CudaDriver::load() {
  std::string error;
  CudaDriver driver;
  driver.library_ = SharedLibrary::open(kDriverLibrary, error);
  if (!driver.library_.is_open()) {
    throw std::invalid_argument(std::string("no NVIDIA driver: ") + kDriverLibrary +
                                " not found (" + error + ")");
  }
  bind_all(driver.library_, driver.api_);
  if (const CUresult result = driver.api_.init(0); result != CUDA_SUCCESS) {
    throw std::invalid_argument("no CUDA device: cuInit returned " + driver.error_text(result));
  }
  if (const CUresult result = driver.api_.device_get_count(&driver.devices_);
      result != CUDA_SUCCESS) {
    throw std::invalid_argument("no CUDA device: cuDeviceGetCount returned " +
                                driver.error_text(result));
  }
  if (driver.devices_ < 1)
    throw std::invalid_argument("no CUDA device: cuDeviceGetCount found 0 devices");
  return driver;
}

std::string CudaDriver::error_text(CUresult result) const {
  const char* name = nullptr;
  if (api_.get_error_name == nullptr || api_.get_error_name(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    name = "CUDA error";
  }
  return std::string(name) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

CUcontext CudaDriver::current_context() const {
  CUcontext context = nullptr;
  if (api_.ctx_get_current(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

CUcontext CudaDriver::device_memory_context(const MemoryView& memory) const {
  const auto address = reinterpret_cast<CUdeviceptr>(memory.data);
  unsigned int type = 0;
  const CUresult result =
      api_.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  if (result != CUDA_SUCCESS || type != CU_MEMORYTYPE_DEVICE) {
    throw std::invalid_argument(
        "gds: the memory view says device memory, but its address is not CUDA device memory (" +
        (result != CUDA_SUCCESS ? "cuPointerGetAttribute returned " + error_text(result)
                                : "memory type " + std::to_string(type)) +
        ")");
  }
  CUcontext context = nullptr;
  if (api_.pointer_get_attribute(&context, CU_POINTER_ATTRIBUTE_CONTEXT, address) != CUDA_SUCCESS)
    return nullptr;
  return context;
}

PrimaryContext::PrimaryContext(const CudaDriver& driver, int ordinal) : api_(&driver.api()) {
  CUresult result = api_->device_get(&device_, ordinal);
  if (result == CUDA_SUCCESS) result = api_->primary_ctx_retain(&context_, device_);
  if (result != CUDA_SUCCESS) {
    context_ = nullptr;
    throw IoError("gds: retaining the primary context of CUDA device " + std::to_string(ordinal) +
                  ": " + driver.error_text(result));
  }
}

PrimaryContext::~PrimaryContext() {
  release();
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : api_(other.api_), device_(other.device_), context_(std::exchange(other.context_, nullptr)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    release();
    api_ = other.api_;
    device_ = other.device_;
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

void PrimaryContext::release() noexcept {
  if (context_ != nullptr) api_->primary_ctx_release(device_);
  context_ = nullptr;
}

ContextScope::ContextScope(const CudaDriver& driver, CUcontext context) : api_(&driver.api()) {
  if (context == nullptr) return;
  previous_ = driver.current_context();
  if (previous_ == context) return;
  if (const CUresult result = api_->ctx_set_current(context); result != CUDA_SUCCESS) {
    throw IoError("gds: cuCtxSetCurrent: " + driver.error_text(result));
  }
  switched_ = true;
}

ContextScope::~ContextScope() {
  if (switched_) api_->ctx_set_current(previous_);
}

}  // namespace ckpt::backends::gds
