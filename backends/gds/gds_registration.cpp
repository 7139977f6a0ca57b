#include "backends/gds/gds_declaration.hpp"
#include "backends/registration.hpp"

#if CKPT_HAVE_BACKEND_GDS
#include "backends/gds/gds_backend.hpp"
#endif

namespace ckpt::backends::gds {

BackendRegistration registration() {
  BackendRegistration r{
      .name = "gds",
      .description = "NVIDIA GPUDirect Storage (cuFile, loaded at run time): device memory to file",
      .options = option_table(),
      .capabilities = &declared_capabilities};
#if CKPT_HAVE_BACKEND_GDS
  r.make = [](const IoSettings& settings, const BackendOptions& options,
              const ProcessGroup&) -> std::unique_ptr<Backend> {
    return std::make_unique<GdsBackend>(settings, parse_options(options));
  };
  // Compiled in, it still needs libcufile, the NVIDIA driver and a GPU at run time.
  r.probe = &unavailable_reason;
#endif
  return r;
}

}  // namespace ckpt::backends::gds
