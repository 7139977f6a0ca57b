#pragma once

// What the uring backend declares about itself (header-only: listed whether or not compiled in).
#include "backends/backend.hpp"

namespace ckpt::backends::uring {

// Requests in flight per ring (one ring per worker thread).
inline constexpr int kMaxQueueDepth = 4096;

inline OptionTable option_table() {
  return {};
}

inline Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{.direct_io = true,
                      .shared_file = true,
                      .threads = true,
                      .fallocate = true,
                      .sqpoll = true,
                      .max_queue_depth = kMaxQueueDepth,
                      .request_latency = true,
                      .mmap = true};
}

}  // namespace ckpt::backends::uring
