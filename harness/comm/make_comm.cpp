#include <cstdlib>

#include "harness/comm/comm.hpp"
#include "harness/comm/single_comm.hpp"

#if CKPT_HAVE_MPI
#include "harness/comm/mpi_comm.hpp"
#endif

namespace ckpt::harness {
namespace {

bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

}  // namespace

bool built_with_mpi() { return CKPT_HAVE_MPI != 0; }

std::unique_ptr<Comm> make_comm() {
#if CKPT_HAVE_MPI
  if (launched_by_mpi()) return std::make_unique<MpiComm>();
#else
  (void)launched_by_mpi;
#endif
  return std::make_unique<SingleComm>();
}

}  // namespace ckpt::harness
