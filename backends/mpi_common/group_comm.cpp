#include "backends/mpi_common/group_comm.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "backends/mpi_common/mpi_error.hpp"

namespace ckpt::backends::mpi {

bool mpi_active() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

GroupComm::GroupComm(std::string_view backend, const ProcessGroup& group) {
  if (!mpi_active()) {
    throw std::invalid_argument(
        std::string(backend) +
        " needs MPI initialised: run ckptbench built with MPI (CKPT_WITH_MPI), "
        "under mpirun or as a single process, so that it calls MPI_Init_thread "
        "before making the backend");
  }
  const MPI_Comm parent = group.mpi_comm ? MPI_Comm_f2c(*group.mpi_comm) : MPI_COMM_SELF;
  if (parent == MPI_COMM_NULL) {
    throw std::invalid_argument(std::string(backend) +
                                ": the process group's communicator (Fortran handle " +
                                std::to_string(*group.mpi_comm) + ") is MPI_COMM_NULL");
  }
  const int code = MPI_Comm_dup(parent, &comm_);
  if (code != MPI_SUCCESS) {
    comm_ = MPI_COMM_NULL;
    throw std::runtime_error(
        std::string(backend) +
        ": MPI_Comm_dup of the process group's communicator: " + mpi_error_text(code));
  }
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

GroupComm::~GroupComm() {
  release();
}

GroupComm::GroupComm(GroupComm&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)), rank_(other.rank_), size_(other.size_) {}

GroupComm& GroupComm::operator=(GroupComm&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
  }
  return *this;
}

void GroupComm::release() noexcept {
  if (comm_ != MPI_COMM_NULL && mpi_active()) MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

}  // namespace ckpt::backends::mpi
