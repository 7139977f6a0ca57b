#include "backends/registration.hpp"
#include "backends/uring/uring_declaration.hpp"

#if CKPT_HAVE_BACKEND_URING
#include "backends/uring/uring_backend.hpp"
#endif

namespace ckpt::backends::uring {

BackendRegistration registration() {
  BackendRegistration r{
      .name = "uring",
      .description =
          "Linux io_uring (liburing): queued asynchronous I/O; O_DIRECT, registered buffers",
      .options = option_table(),
      .capabilities = &declared_capabilities};
#if CKPT_HAVE_BACKEND_URING
  r.make = [](const IoSettings& settings, const BackendOptions&,
              const ProcessGroup&) -> std::unique_ptr<Backend> {
    return std::make_unique<UringBackend>(settings, UringOptions{.sqpoll = settings.sqpoll});
  };
#endif
  return r;
}

}  // namespace ckpt::backends::uring
