#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends {

// An option a backend accepts in [backend.<name>]; a key ending in ".*" accepts any sub-key
// ("hints.*": MPI info hints).
struct BackendOption {
  std::string key;
  std::string default_value;  // as text; "" when unset by default
  std::string description;
};

// A backend the build knows about: compiled in and usable, or why not and how to enable it.
struct BackendInfo {
  std::string name;          // registry key = folder name = config value
  bool available = false;
  std::string reason;        // empty when available
  std::string cmake_option;  // CKPT_BACKEND_<NAME>
  std::string description;
  std::vector<BackendOption> options;
  bool needs_mpi = false;  // needs MPI initialised (collective backends), even in one process
};

// Every backend, compiled in or not, in a fixed order. Built by one function that calls each
// compiled backend's registration explicitly (no static initialisers).
std::vector<BackendInfo> list_backends();

// A new backend instance. Throws std::invalid_argument for an unknown name (suggesting the
// closest), an unavailable backend (with the reason and the CMake option), or settings the
// backend cannot honour (naming the setting).
// `options` keys must be among the backend's BackendInfo::options; `group` is the set of processes
// that call write/read together (collective backends need its MPI communicator).
std::unique_ptr<Backend> make_backend(std::string_view name, const IoSettings& settings,
                                      const BackendOptions& options = {}, const ProcessGroup& group = {});

// Everything make_backend checks, without constructing the backend or touching MPI or storage:
// the name, availability in this build and on this machine, the option keys and values, and
// the settings against the backend's capabilities. Throws std::invalid_argument like
// make_backend. For `--dry-run`.
void validate_backend(std::string_view name, const IoSettings& settings, const BackendOptions& options = {});

// The closest option key of backend `name` to `key`, or "" (for "did you mean" messages).
std::string closest_option(std::string_view name, std::string_view key);

}  // namespace ckpt::backends
