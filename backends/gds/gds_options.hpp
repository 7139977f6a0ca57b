#pragma once

#include <string>

#include "backends/backend.hpp"
#include "backends/gds/cufile_api.hpp"

namespace ckpt::backends::gds {

// The [backend.gds] options, parsed against gds::option_table(), which holds
// every default: parse_options({}) gives them.
struct GdsOptions {
  // The cuFile library: a path, or a name for the dynamic loader. At the default,
  // $CKPT_CUFILE_LIBRARY wins when set (see choose_library).
  std::string library;
  // Register device memory with cuFileBufRegister for each write or read (inside the timed
  // transfer phase); a refusal falls back to unregistered buffers with a note.
  bool register_buffers = false;
  // Submit `queue_depth` requests at a time through the cuFile batch API; without it (or
  // without batch support in the library, noted) one request at a time per thread.
  bool batch = false;
};

// Throws std::invalid_argument naming `backend.gds.<key>`: an unknown key or a bad value.
GdsOptions parse_options(const BackendOptions& options);

}  // namespace ckpt::backends::gds
