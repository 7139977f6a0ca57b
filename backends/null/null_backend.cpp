#include "backends/null/null_backend.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "backends/null/null_declaration.hpp"

namespace ckpt::backends::null {

NullBackend::NullBackend(const IoSettings&) {}

Capabilities NullBackend::capabilities() const {
  return declared_capabilities({"null", option_table(), {}});
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
