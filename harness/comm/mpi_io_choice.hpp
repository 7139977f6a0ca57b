#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::harness {

// Which MPI-IO implementation the mpiio and hdf5 backends run on (`campaign.mpi_io`). Open MPI
// ships two, chosen once per process before MPI starts: OMPIO (its default except on Lustre) and
// ROMIO; MPICH and its derivatives have ROMIO only. Parallel HDF5's many small collective calls
// run far better over ROMIO (backends/hdf5/README.md).
enum class MpiIoChoice { library_default, romio, ompio };

// "default", "romio", "ompio" and back; nullopt for another name.
std::optional<MpiIoChoice> mpi_io_choice_named(std::string_view name);
std::string_view mpi_io_choice_name(MpiIoChoice choice);

// Asks Open MPI for `choice` by setting OMPI_MCA_io ("^ompio" for ROMIO, whatever its version;
// "ompio") in this process's environment, before MPI starts. An OMPI_MCA_io the user set already
// (mpirun --mca io …) is kept when it agrees; when it does not, or when `choice` is ompio and this
// build's MPI is not Open MPI, the result is why (nothing is changed). Must run before MPI_Init.
std::optional<std::string> request_mpi_io(MpiIoChoice choice);

// Open MPI's MPI-IO modules loaded into this process (from /proc/self/maps: mca_io_romio321.so
// → "romio321"), sorted; empty when none are loaded or this is not Linux with Open MPI.
std::vector<std::string> loaded_mpi_io_modules();

}  // namespace ckpt::harness
