#pragma once

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/hdf5/hdf5_options.hpp"
#include "backends/mpi_common/group_comm.hpp"
#include "backends/mpi_common/info_hints.hpp"

namespace ckpt::backends::hdf5 {

// HDF5 datasets: every tensor piece of a plan (FilePlan::datasets) is a hyperslab of a dataset
// of the tensor's global shape; a plan without pieces stores its extents in one 1-D byte
// dataset, "bytes". A shared file (FilePlan::shared) is parallel HDF5 over MPI-IO on the
// communicator of the processes that name it; every other file is serial HDF5 (file per rank).
//
// Collective: every process of the group calls write/read together with its whole plan. In a
// shared file the processes agree on the datasets (MPI_Allgatherv of their definitions) and
// create them all in name order; with `collective` each makes the same number of transfer calls
// per dataset. Phases: open creates or opens the files and datasets (the metadata cost), transfer
// is H5Dwrite/H5Dread, sync is H5Fflush plus fsync/fdatasync (shared files: MPI_File_sync),
// close closes datasets and files.
// The declared capabilities with what the linked library says: background_thread is
// H5is_library_threadsafe() (the Debian libhdf5-openmpi build is not thread-safe).
Capabilities library_capabilities(const OptionValues& values);

class Hdf5Backend final : public Backend {
 public:
  // Throws std::invalid_argument naming the setting or `backend.hdf5.<key>`: `threads` or
  // `queue_depth` other than 1, `direct`, `fallocate`, `sqpoll`, a bad option value, or MPI not
  // initialised. Collective over the group (duplicates its communicator).
  Hdf5Backend(const IoSettings& settings, const BackendOptions& options, const ProcessGroup& group);

  std::string_view name() const override { return "hdf5"; }
  Capabilities capabilities() const override;
  // Why HDF5 fell back from collective I/O during the last write or read, and how sync was done
  // where it differs from the policy's name.
  std::vector<std::string> notes() const override;

 protected:
  // Checks the plan's pieces (std::invalid_argument; every process learns whether any plan is
  // bad before any file is touched), then creates/opens every file and dataset. Collective.
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  // Checks the pieces against the memory view, then moves every piece of the plan given to open()
  // (a collective backend is handed the whole plan once; Backend::begin refuses to stream it).
  // Collective in shared files.
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  // Write with a sync policy: flushes and syncs every file. Read: nothing.
  void sync(OpenFiles& files, Direction direction) override;
  // Closes every file (all of them, then throws the first failure).
  void close(OpenFiles& files) override;

 private:
  class Files;

  IoSettings settings_;
  Hdf5Options options_;
  mpi::GroupComm group_;
  mpi::InfoHints hints_;
  std::set<std::string> notes_;  // of the last write or read
};

}  // namespace ckpt::backends::hdf5
