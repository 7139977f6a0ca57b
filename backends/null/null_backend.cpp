#include "backends/null/null_backend.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace ckpt::backends::null {

NullBackend::NullBackend(const IoSettings& settings) {
  if (settings.threads < 1) {
    throw std::invalid_argument("null: `threads` must be at least 1 (got " +
                                std::to_string(settings.threads) + ")");
  }
  if (settings.queue_depth < 1) {
    throw std::invalid_argument("null: `queue_depth` must be at least 1 (got " +
                                std::to_string(settings.queue_depth) + ")");
  }
}

Capabilities NullBackend::capabilities() const {
  Capabilities caps;
  caps.direct_io = true;
  caps.device_memory = true;
  caps.shared_file = true;
  caps.collective = false;
  caps.max_queue_depth = std::numeric_limits<int>::max();
  caps.stores_data = false;
  return caps;
}

std::unique_ptr<Backend::OpenFiles> NullBackend::open(const IoPlan& /*plan*/,
                                                      Direction /*direction*/) {
  return std::make_unique<OpenFiles>();
}

void NullBackend::transfer(OpenFiles& /*files*/, const IoPlan& /*plan*/, MemoryView /*memory*/,
                           Direction /*direction*/) {}

void NullBackend::sync(OpenFiles& /*files*/, Direction /*direction*/) {}

void NullBackend::close(OpenFiles& /*files*/) {}

}  // namespace ckpt::backends::null
