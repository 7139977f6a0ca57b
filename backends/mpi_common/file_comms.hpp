#pragma once

#include <mpi.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::mpi {

// For every file of a plan, the communicator of the processes that access it: a shared file
// (FilePlan::shared) gets a communicator of exactly the processes of `group` whose plans name
// the same path as shared (MPI_Comm_create_group, one per path, created in sorted path order so
// that no two processes wait on each other in opposite orders); a shared file every process of
// `group` names gets `group` itself; a shared file no other process names, and every other file,
// gets MPI_COMM_SELF.
//
// Collective over `group`: every process constructs it once per write or read, even with an
// empty plan. Move-only; the destructor frees the communicators it created (before the files
// opened on them are closed is fine: MPI keeps a communicator alive while a file uses it).
class FileComms {
 public:
  // Throws IoError ("<backend>: <MPI call> <path>: <MPI error text>") when MPI refuses a call.
  FileComms(MPI_Comm group, const IoPlan& plan, std::string_view backend = "mpi");
  ~FileComms();
  FileComms(FileComms&& other) noexcept;
  FileComms& operator=(FileComms&& other) noexcept;
  FileComms(const FileComms&) = delete;
  FileComms& operator=(const FileComms&) = delete;

  // The communicator of plan.files[file_index]. Throws std::out_of_range past the plan's files.
  MPI_Comm of(std::size_t file_index) const;
  // How many processes use that communicator.
  int size_of(std::size_t file_index) const;

 private:
  void release() noexcept;

  std::vector<MPI_Comm> per_file_;
  std::vector<MPI_Comm> owned_;  // freed by the destructor
};

}  // namespace ckpt::backends::mpi
