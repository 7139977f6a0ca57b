#pragma once

// What the gds backend declares about itself (header-only, no CUDA or cuFile headers: listed
// whether or not the backend is compiled in).
#include "backends/backend.hpp"

namespace ckpt::backends::gds {

inline constexpr const char* kDefaultLibrary = "libcufile.so.0";
// Requests per cuFile batch when the library does not report max_batch_io_size.
inline constexpr int kDefaultMaxBatch = 128;

inline OptionTable option_table() {
  return {
      {.name = "library",
       .type = OptionType::text,
       .default_value = kDefaultLibrary,
       .help = "libcufile to load: a path, or a name the dynamic loader finds; at this default, "
               "$CKPT_CUFILE_LIBRARY wins when set"},
      {.name = "register_buffers",
       .type = OptionType::boolean,
       .default_value = "true",
       .help = "register device memory with cuFileBufRegister for each write or read"},
      {.name = "batch",
       .type = OptionType::boolean,
       .default_value = "false",
       .help = "submit queue_depth requests at a time through the cuFile batch API"}};
}

inline Capabilities declared_capabilities(const OptionValues& options) {
  return Capabilities{
      .direct_io = true,
      .device_memory = true,
      .shared_file = true,
      .threads = true,
      .fallocate = true,
      .max_queue_depth = options.boolean("batch") ? kDefaultMaxBatch : 1,
      .advice = {
          {"queue_depth",
           "without backend.gds.batch = true cuFileRead/cuFileWrite move one request at a time; "
           "use `threads`, or the batch API"},
          {"sqpoll", "it needs a submission ring; set sqpoll = false"}}};
}

}  // namespace ckpt::backends::gds
