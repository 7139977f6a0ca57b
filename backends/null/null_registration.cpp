#include "backends/null/null_declaration.hpp"
#include "backends/registration.hpp"

#if CKPT_HAVE_BACKEND_NULL
#include "backends/null/null_backend.hpp"
#endif

namespace ckpt::backends::null {

BackendRegistration registration() {
  BackendRegistration r{.name = "null",
                        .description = "no I/O: measures the harness's own overhead",
                        .options = option_table(),
                        .capabilities = &declared_capabilities};
#if CKPT_HAVE_BACKEND_NULL
  r.make = [](const IoSettings& settings, const BackendOptions&,
              const ProcessGroup&) -> std::unique_ptr<Backend> {
    return std::make_unique<NullBackend>(settings);
  };
#endif
  return r;
}

}  // namespace ckpt::backends::null
