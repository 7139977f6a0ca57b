#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/options.hpp"

namespace ckpt::backends {

// A backend the build knows about: compiled in and usable, or why not and how to enable it.
struct BackendInfo {
  std::string name;  // registry key = folder name = config value
  bool available = false;
  std::string reason;        // empty when available
  std::string cmake_option;  // CKPT_BACKEND_<NAME>
  std::string description;
  OptionTable options;        // [backend.<name>]: the one declaration of every option
  Capabilities capabilities;  // with the options' defaults
  bool needs_mpi = false;     // needs MPI initialised (collective backends), even in one process
};

// Every backend of CKPT_BACKENDS (backends/CMakeLists.txt), compiled in or not, in that order.
std::vector<BackendInfo> list_backends();

// A new backend instance. Throws std::invalid_argument for an unknown name (suggesting the
// closest), an unavailable backend (with the reason and the CMake option), an unknown option
// or a bad value (naming `backend.<name>.<key>`), or settings beyond its capabilities (naming
// `backend.<setting>`). `group` is the set of processes that call write/read together
// (collective backends need its MPI communicator).
std::unique_ptr<Backend> make_backend(std::string_view name, const IoSettings& settings,
                                      const BackendOptions& options = {},
                                      const ProcessGroup& group = {});

// Everything make_backend checks, without constructing the backend or touching MPI or storage.
// Throws std::invalid_argument like make_backend. For `--dry-run`.
void validate_backend(std::string_view name, const IoSettings& settings,
                      const BackendOptions& options = {});

}  // namespace ckpt::backends
