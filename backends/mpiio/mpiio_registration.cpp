#include "backends/mpiio/mpiio_declaration.hpp"
#include "backends/registration.hpp"

#if CKPT_HAVE_BACKEND_MPIIO
#include "backends/mpi_common/info_hints.hpp"
#include "backends/mpiio/mpiio_backend.hpp"
#endif

namespace ckpt::backends::mpiio {

BackendRegistration registration() {
  BackendRegistration r{
      .name = "mpiio",
      .description = "MPI-IO (ROMIO or OMPIO): independent or collective, shared files",
      .options = option_table(),
      .capabilities = &declared_capabilities,
      .needs_mpi = true};
#if CKPT_HAVE_BACKEND_MPIIO
  r.make = [](const IoSettings& settings, const BackendOptions& options,
              const ProcessGroup& group) -> std::unique_ptr<Backend> {
    return std::make_unique<MpiioBackend>(settings, options, group);
  };
  r.check = [](const BackendOptions& options) { return mpi::hints_problem("mpiio", options); };
#endif
  return r;
}

}  // namespace ckpt::backends::mpiio
