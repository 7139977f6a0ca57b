#pragma once

#include <cufile.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "backends/gds/gds_declaration.hpp"
#include "backends/gds/shared_library.hpp"

namespace ckpt::backends::gds {

// kDefaultLibrary (beside option_table()) is the name the dynamic loader is asked for when nothing
// else is configured; "libcufile.so" is tried after it (a development install without the
// versioned link).
// The environment variable that names the library when backend.gds.library keeps its default.
inline constexpr const char* kLibraryVariable = "CKPT_CUFILE_LIBRARY";

// The cuFile functions the backend calls, typed by the real <cufile.h> and resolved from
// libcufile at run time. The batch functions and the parameter getters are optional: older
// libraries lack them, and the backend then works without.
struct CufileApi {
  decltype(&::cuFileDriverOpen) driver_open = nullptr;
  decltype(&::cuFileDriverClose) driver_close = nullptr;  // cuFileDriverClose_v2 through <cufile.h>
  decltype(&::cuFileDriverGetProperties) driver_get_properties = nullptr;
  decltype(&::cuFileHandleRegister) handle_register = nullptr;
  decltype(&::cuFileHandleDeregister) handle_deregister = nullptr;
  decltype(&::cuFileBufRegister) buf_register = nullptr;
  decltype(&::cuFileBufDeregister) buf_deregister = nullptr;
  decltype(&::cuFileRead) read = nullptr;
  decltype(&::cuFileWrite) write = nullptr;

  decltype(&::cuFileBatchIOSetUp) batch_set_up = nullptr;
  decltype(&::cuFileBatchIOSubmit) batch_submit = nullptr;
  decltype(&::cuFileBatchIOGetStatus) batch_get_status = nullptr;
  decltype(&::cuFileBatchIOCancel) batch_cancel = nullptr;
  decltype(&::cuFileBatchIODestroy) batch_destroy = nullptr;
  decltype(&::cuFileGetVersion) get_version = nullptr;
  decltype(&::cuFileGetParameterBool) get_parameter_bool = nullptr;

  bool has_batch() const noexcept {
    return batch_set_up != nullptr && batch_submit != nullptr && batch_get_status != nullptr &&
           batch_cancel != nullptr && batch_destroy != nullptr;
  }
};

// Where libcufile is loaded from.
struct LibraryChoice {
  std::vector<std::string> candidates;  // tried in this order
  std::string origin;  // "backend.gds.library", kLibraryVariable, or "" for the defaults
};

// backend.gds.library when it differs from kDefaultLibrary; else $CKPT_CUFILE_LIBRARY when set;
// else kDefaultLibrary, then "libcufile.so".
LibraryChoice choose_library(const std::string& option);

// libcufile loaded, with every required function resolved. Move-only.
class CufileLibrary {
 public:
  // Throws std::invalid_argument naming what was tried and how to fix it, e.g. "libcufile.so.0
  // not found (install the nvidia-cufile wheel or set backend.gds.library): ...".
  static CufileLibrary load(const LibraryChoice& choice);

  const CufileApi& api() const noexcept { return api_; }
  // The file the loader mapped.
  const std::string& path() const noexcept { return path_; }

 private:
  SharedLibrary library_;
  CufileApi api_;
  std::string path_;
};

// "nvidia-fs driver is not loaded. ... (5001)"; CUDA driver errors add the CUresult.
std::string cufile_error_text(const CUfileError_t& status);
// The text of a negative cuFileRead/cuFileWrite result: -1 is errno (`error_number`), below
// that the negated CUfileOpError (or, from some releases, the negated errno).
std::string cufile_io_error_text(ssize_t result, int error_number);

}  // namespace ckpt::backends::gds
