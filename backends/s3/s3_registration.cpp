#include "backends/registration.hpp"
#include "backends/s3/s3_declaration.hpp"

#if CKPT_HAVE_BACKEND_S3
#include "backends/s3/s3_backend.hpp"
#include "backends/s3/s3_config.hpp"
#endif

namespace ckpt::backends::s3 {

BackendRegistration registration() {
  BackendRegistration r{
      .name = "s3",
      .description =
          "S3 object store (libcurl, SigV4): an object per file, multipart uploads, "
          "ranged GETs",
      .options = option_table(),
      .capabilities = &declared_capabilities};
#if CKPT_HAVE_BACKEND_S3
  r.make = [](const IoSettings& settings, const BackendOptions& options,
              const ProcessGroup& group) -> std::unique_ptr<Backend> {
    return std::make_unique<S3Backend>(settings, options, group);
  };
  r.check = &config_problem;  // in the backend's library: set only where it is compiled in
#endif
  return r;
}

}  // namespace ckpt::backends::s3
