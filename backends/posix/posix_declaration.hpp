#pragma once

// What the posix backend declares about itself (header-only: the registry lists it whether or
// not the backend is compiled in).
#include "backends/backend.hpp"

namespace ckpt::backends::posix {

inline OptionTable option_table() {
  return {
      {.name = "throttle_percent",
       .type = OptionType::integer,
       .default_value = "0",
       .help =
           "a deliberate slowdown for proving regression gates: after each request (pwrite, pread, "
           "fsync/fdatasync) sleep this percent of its time (benchmarks/gate_proof.sh); 0: off",
       .min = 0,
       .max = 1000}};
}

inline Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{
      .direct_io = true,
      .shared_file = true,
      .threads = true,
      .fallocate = true,
      .request_latency = true,
      .mmap = true,
      .advice = {{"queue_depth",
                  "posix issues one request at a time per thread; use `threads`, or the uring "
                  "backend for deeper queues"},
                 {"sqpoll", "it needs a submission ring; use the uring backend"}}};
}

}  // namespace ckpt::backends::posix
