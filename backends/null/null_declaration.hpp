#pragma once

// What the null backend declares about itself (header-only: listed whether or not compiled in).
#include <limits>

#include "backends/backend.hpp"

namespace ckpt::backends::null {

inline OptionTable option_table() {
  return {};
}

inline Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{.direct_io = true,
                      .device_memory = true,
                      .shared_file = true,
                      .threads = true,
                      .fallocate = true,
                      .sqpoll = true,
                      .max_queue_depth = std::numeric_limits<int>::max(),
                      .stores_data = false};
}

}  // namespace ckpt::backends::null
