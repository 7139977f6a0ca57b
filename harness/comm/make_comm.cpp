#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "harness/comm/comm.hpp"
#include "harness/comm/single_comm.hpp"

#if CKPT_HAVE_MPI
#include <mpi.h>

#include "harness/comm/mpi_comm.hpp"
#endif

namespace ckpt::harness {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

std::optional<int> launch_processes_per_node() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"}) {
    if (const char* value = std::getenv(var)) {
      const int n = std::atoi(value);
      if (n > 0) return n;
    }
  }
  if (!launched_by_mpi()) return 1;
  return std::nullopt;
}

bool built_with_mpi() {
  return CKPT_HAVE_MPI != 0;
}

std::string mpi_library_version() {
#if CKPT_HAVE_MPI
  std::string text(MPI_MAX_LIBRARY_VERSION_STRING, '\0');
  int length = 0;
  if (MPI_Get_library_version(text.data(), &length) != MPI_SUCCESS) length = 0;
  text.resize(static_cast<std::size_t>(length));
  text = text.substr(0, std::min(text.find(','), text.find('\n')));
  return text + " (MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) +
         " headers)";
#else
  return "";
#endif
}

std::unique_ptr<Comm> make_comm(bool need_mpi, bool thread_multiple) {
#if CKPT_HAVE_MPI
  if (launched_by_mpi() || need_mpi) return std::make_unique<MpiComm>(thread_multiple);
#else
  (void)need_mpi;  // the backends that need MPI are not built without it
  (void)thread_multiple;
  // Several copies of a build without MPI would each write every rank's files.
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (size == nullptr) size = std::getenv("PMI_SIZE");
  if (launched_by_mpi() && size != nullptr && std::atoi(size) > 1) {
    throw std::runtime_error(
        "this ckptbench was built without MPI (CKPT_WITH_MPI=OFF or MPI not found at configure "
        "time) but was started by an MPI launcher with " +
        std::string(size) +
        " processes; rebuild with MPI (libopenmpi-dev) or run it without mpirun");
  }
#endif
  return std::make_unique<SingleComm>();
}

}  // namespace ckpt::harness
