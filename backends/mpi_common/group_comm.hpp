#pragma once

#include <mpi.h>

#include <string_view>

#include "backends/backend.hpp"

namespace ckpt::backends::mpi {

// Whether MPI is initialised and not yet finalised: handles freed after MPI_Finalize (a backend
// that outlives the program's MPI) are left alone rather than crashing the exit path.
bool mpi_active();

// The communicator a collective backend runs on: a duplicate (MPI_Comm_dup) of the
// ProcessGroup's communicator (MPI_Comm_f2c(*group.mpi_comm)), or of MPI_COMM_SELF when the
// group has none, so that the backend's traffic never matches the caller's messages.
// Construction is collective over that communicator (every process of the group constructs its
// backend together). Move-only; the destructor frees the duplicate.
class GroupComm {
 public:
  // Throws std::invalid_argument("<backend> needs MPI initialised: ...") when MPI_Initialized is
  // false (or MPI is already finalised), and std::runtime_error when the duplicate fails.
  GroupComm(std::string_view backend, const ProcessGroup& group);
  ~GroupComm();
  GroupComm(GroupComm&& other) noexcept;
  GroupComm& operator=(GroupComm&& other) noexcept;
  GroupComm(const GroupComm&) = delete;
  GroupComm& operator=(const GroupComm&) = delete;

  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  void release() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace ckpt::backends::mpi
