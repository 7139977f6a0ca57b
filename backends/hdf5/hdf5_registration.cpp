#include "backends/hdf5/hdf5_declaration.hpp"
#include "backends/registration.hpp"

#if CKPT_HAVE_BACKEND_HDF5
#include "backends/hdf5/hdf5_backend.hpp"
#include "backends/mpi_common/info_hints.hpp"
#endif

namespace ckpt::backends::hdf5 {

BackendRegistration registration() {
  BackendRegistration r{.name = "hdf5",
                        .description =
                            "HDF5 datasets of the tensors' shapes: parallel HDF5 (MPI-IO) for "
                            "shared files, serial per rank",
                        .options = option_table(),
                        .capabilities = &declared_capabilities,
                        .needs_mpi = true};
#if CKPT_HAVE_BACKEND_HDF5
  r.capabilities = &library_capabilities;
  r.make = [](const IoSettings& settings, const BackendOptions& options,
              const ProcessGroup& group) -> std::unique_ptr<Backend> {
    return std::make_unique<Hdf5Backend>(settings, options, group);
  };
  r.check = [](const BackendOptions& options) { return mpi::hints_problem("hdf5", options); };
#endif
  return r;
}

}  // namespace ckpt::backends::hdf5
