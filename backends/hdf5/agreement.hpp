#pragma once

#include <mpi.h>

#include <string>

#include "backends/hdf5/catalog.hpp"

namespace ckpt::backends::hdf5 {

// The merge of every process's contents of one shared file (MPI_Allgatherv of serialise()), the
// same on every process of `comm`. Collective over `comm`. Throws IoError when MPI fails or the
// processes disagree (every process throws alike).
FileContents agree(MPI_Comm comm, const FileContents& mine, const std::string& path);

// Sets every dataset's `calls` to the largest of any process of `comm` (MPI_Allreduce). The
// processes hold the same datasets in the same order. Collective over `comm`.
void agree_on_calls(MPI_Comm comm, FileContents& contents, const std::string& path);

// Process 0's `value`, on every process of `comm`. Collective over `comm`.
bool broadcast_flag(MPI_Comm comm, bool value, const std::string& path);

// Whether every process of `comm` passes `ok`, and whether any passes `flag`. Collective.
struct GroupVote {
  bool all_ok = true;
  bool any_flag = false;
};
GroupVote vote(MPI_Comm comm, bool ok, bool flag);

}  // namespace ckpt::backends::hdf5
