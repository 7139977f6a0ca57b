#include "backends/posix/posix_declaration.hpp"
#include "backends/registration.hpp"

#if CKPT_HAVE_BACKEND_POSIX
#include "backends/posix/posix_backend.hpp"
#endif

namespace ckpt::backends::posix {

BackendRegistration registration() {
  BackendRegistration r{
      .name = "posix",
      .description = "POSIX pread/pwrite; O_DIRECT, fallocate, fsync/fdatasync, threads",
      .options = option_table(),
      .capabilities = &declared_capabilities};
#if CKPT_HAVE_BACKEND_POSIX
  r.make = [](const IoSettings& settings, const BackendOptions& options,
              const ProcessGroup&) -> std::unique_ptr<Backend> {
    return std::make_unique<PosixBackend>(settings, options);
  };
#endif
  return r;
}

}  // namespace ckpt::backends::posix
