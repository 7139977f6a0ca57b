#pragma once

#include <string>

#include "backends/backend.hpp"
#include "backends/gds/cufile_api.hpp"

namespace ckpt::backends::gds {

// The [backend.gds] options (BackendOptions as text, documented in backends/README.md).
struct GdsOptions {
  // The cuFile library: a path, or a name for the dynamic loader. At the default,
  // $CKPT_CUFILE_LIBRARY wins when set (see choose_library).
  std::string library = kDefaultLibrary;
  // Register device memory with cuFileBufRegister for each write or read (inside the timed
  // transfer phase); a refusal falls back to unregistered buffers with a note.
  bool register_buffers = true;
  // Submit `queue_depth` requests at a time through the cuFile batch API; without it (or
  // without batch support in the library, noted) one request at a time per thread.
  bool batch = false;
};

// Throws std::invalid_argument naming the key: an unknown key, or a boolean that is neither
// "true" nor "false".
GdsOptions parse_options(const BackendOptions& options);

}  // namespace ckpt::backends::gds
