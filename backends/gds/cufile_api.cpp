#include "backends/gds/cufile_api.hpp"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#define CKPT_GDS_SYMBOL_TEXT(name) #name
// The exported name: <cufile.h> maps cuFileDriverClose to cuFileDriverClose_v2.
#define CKPT_GDS_SYMBOL(name) CKPT_GDS_SYMBOL_TEXT(name)

namespace ckpt::backends::gds {
namespace {

// Binds the required functions; returns the name of the first one missing, or "".
std::string bind_required(const SharedLibrary& library, CufileApi& api) {
  std::string missing;
  auto need = [&](auto& function, const char* symbol) {
    if (!library.bind(function, symbol) && missing.empty()) missing = symbol;
  };
  need(api.driver_open, CKPT_GDS_SYMBOL(cuFileDriverOpen));
  need(api.driver_close, CKPT_GDS_SYMBOL(cuFileDriverClose));
  need(api.driver_get_properties, CKPT_GDS_SYMBOL(cuFileDriverGetProperties));
  need(api.handle_register, CKPT_GDS_SYMBOL(cuFileHandleRegister));
  need(api.handle_deregister, CKPT_GDS_SYMBOL(cuFileHandleDeregister));
  need(api.buf_register, CKPT_GDS_SYMBOL(cuFileBufRegister));
  need(api.buf_deregister, CKPT_GDS_SYMBOL(cuFileBufDeregister));
  need(api.read, CKPT_GDS_SYMBOL(cuFileRead));
  need(api.write, CKPT_GDS_SYMBOL(cuFileWrite));
  return missing;
}

void bind_optional(const SharedLibrary& library, CufileApi& api) {
  library.bind(api.batch_set_up, CKPT_GDS_SYMBOL(cuFileBatchIOSetUp));
  library.bind(api.batch_submit, CKPT_GDS_SYMBOL(cuFileBatchIOSubmit));
  library.bind(api.batch_get_status, CKPT_GDS_SYMBOL(cuFileBatchIOGetStatus));
  library.bind(api.batch_cancel, CKPT_GDS_SYMBOL(cuFileBatchIOCancel));
  library.bind(api.batch_destroy, CKPT_GDS_SYMBOL(cuFileBatchIODestroy));
  library.bind(api.get_version, CKPT_GDS_SYMBOL(cuFileGetVersion));
  library.bind(api.get_parameter_bool, CKPT_GDS_SYMBOL(cuFileGetParameterBool));
}

std::string not_found(const LibraryChoice& choice, const std::string& error) {
  if (choice.origin.empty()) {
    return std::string(kDefaultLibrary) +
           " not found (install the nvidia-cufile wheel or set backend.gds.library or " +
           kLibraryVariable + " to its libcufile.so.0): " + error;
  }
  return "cannot load " + choice.origin + " = \"" + choice.candidates.front() + "\": " + error;
}

}  // namespace

LibraryChoice choose_library(const std::string& option) {
  if (!option.empty() && option != kDefaultLibrary)
    return LibraryChoice{{option}, "backend.gds.library"};
  if (const char* variable = std::getenv(kLibraryVariable);
      variable != nullptr && *variable != '\0') {
    return LibraryChoice{{variable}, kLibraryVariable};
  }
  return LibraryChoice{{kDefaultLibrary, "libcufile.so"}, ""};
}

CufileLibrary CufileLibrary::load(const LibraryChoice& choice) {
  std::string first_error;
  CufileLibrary loaded;
  for (const std::string& candidate : choice.candidates) {
    std::string error;
    loaded.library_ = SharedLibrary::open(candidate, error);
    if (loaded.library_.is_open()) break;
    if (first_error.empty()) first_error = error;
  }
  if (!loaded.library_.is_open()) throw std::invalid_argument(not_found(choice, first_error));
  loaded.path_ = loaded.library_.path();
  if (const std::string missing = bind_required(loaded.library_, loaded.api_); !missing.empty()) {
    throw std::invalid_argument(loaded.path_ + " is not a usable cuFile library: it lacks " +
                                missing);
  }
  bind_optional(loaded.library_, loaded.api_);
  return loaded;
}

std::string cufile_error_text(const CUfileError_t& status) {
  std::string text = std::string(cufileop_status_error(status.err)) + " (" +
                     std::to_string(static_cast<int>(status.err)) + ")";
  if (IS_CUDA_ERR(status))
    text += ", CUresult " + std::to_string(static_cast<int>(CU_FILE_CUDA_ERR(status)));
  return text;
}

std::string cufile_io_error_text(ssize_t result, int error_number) {
  if (result == -1) return std::strerror(error_number);
  const auto code = static_cast<int>(-result);
  if (!IS_CUFILE_ERR(code)) return std::strerror(code);  // some releases return -errno
  return std::string(cufileop_status_error(static_cast<CUfileOpError>(code))) + " (" +
         std::to_string(code) + ")";
}

}  // namespace ckpt::backends::gds
