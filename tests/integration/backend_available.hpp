#pragma once

// Whether this build has backend `name` and can run it here (uring needs a kernel that allows
// io_uring, gds a GPU): tests of a backend skip, saying why, where it is not.

#include <string>

#include "backends/registry.hpp"

namespace ckpt::integration {

inline bool backend_available(const std::string& name) {
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (b.name == name) return b.available;
  }
  return false;
}

}  // namespace ckpt::integration
