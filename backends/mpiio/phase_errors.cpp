#include "backends/mpiio/phase_errors.hpp"

#include "backends/mpi_common/mpi_error.hpp"

namespace ckpt::backends::mpiio {

void PhaseErrors::finish(MPI_Comm group, std::string_view backend, std::string_view phase) const {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(group, &size);
  MPI_Comm_rank(group, &rank);
  if (size > 1) {
    const int mine = failed() ? rank : size;
    int first_failed = size;
    mpi::check_mpi(MPI_Allreduce(&mine, &first_failed, 1, MPI_INT, MPI_MIN, group), backend,
                   "MPI_Allreduce agreeing on the outcome of", std::string(phase));
    if (!failed() && first_failed < size) {
      throw IoError(std::string(backend) + ": " + std::string(phase) + " failed on process " +
                    std::to_string(first_failed) + " of the group of " + std::to_string(size) +
                    " (its error is in its result); this process's part succeeded");
    }
  }
  if (first_) throw IoError(*first_);
}

}  // namespace ckpt::backends::mpiio
