#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends {

// A backend the build knows about: compiled in and usable, or why not and how to enable it.
struct BackendInfo {
  std::string name;          // registry key = folder name = config value
  bool available = false;
  std::string reason;        // empty when available
  std::string cmake_option;  // CKPT_BACKEND_<NAME>
  std::string description;
};

// Every backend, compiled in or not, in a fixed order. Built by one function that calls each
// compiled backend's registration explicitly (no static initialisers).
std::vector<BackendInfo> list_backends();

// A new backend instance. Throws std::invalid_argument for an unknown name (suggesting the
// closest), an unavailable backend (with the reason and the CMake option), or settings the
// backend cannot honour (naming the setting).
std::unique_ptr<Backend> make_backend(std::string_view name, const IoSettings& settings);

}  // namespace ckpt::backends
