#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/hdf5/catalog.hpp"
#include "backends/hdf5/hdf5_id.hpp"
#include "backends/hdf5/hdf5_options.hpp"

namespace ckpt::backends::hdf5 {

// How a file is opened: parallel HDF5 over MPI-IO on `comm`, or serial HDF5 (sec2) when `comm`
// is MPI_COMM_NULL.
struct FileAccess {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  const Hdf5Options& options;

  bool parallel() const { return comm != MPI_COMM_NULL; }
};

// One open HDF5 file and its datasets, in the order of its contents (sorted by name; in a shared
// file the same list and order on every process, which parallel HDF5 requires of dataset
// creation). Move-only; ids still open at destruction are closed quietly.
class Hdf5File {
 public:
  // Write: creates the file, or opens it read-write when an HDF5 file is already there (in a
  // shared file process 0 decides and tells the others); creates the datasets it lacks (groups
  // on the way included), checks those it has, writes the root attributes. Collective over
  // access.comm. Throws IoError naming the path and the dataset.
  static Hdf5File create(const std::string& path, FileContents contents, const FileAccess& access);
  // Read: opens the file read-only and every dataset, which must exist with the dtype and shape
  // of the contents (the raw-byte dataset: at least `needed` bytes). Collective over access.comm.
  static Hdf5File open(const std::string& path, FileContents contents, const FileAccess& access);

  const std::string& path() const { return path_; }
  bool parallel() const { return parallel_; }
  const FileContents& contents() const { return contents_; }
  hid_t dataset(std::size_t index) const { return datasets_[index].get(); }
  hid_t type(std::size_t index) const { return types_[index].get(); }

  // H5Fflush (a shared file: MPI_File_sync, collective), then for a serial file fsync or
  // fdatasync of its descriptor. Nothing for SyncPolicy::none. Throws IoError.
  void flush(SyncPolicy sync);
  // Closes the datasets, then the file (collective in a shared file). Throws IoError.
  void close();

 private:
  Hdf5File(std::string path, FileContents contents, bool parallel);
  void open_datasets(bool create);

  std::string path_;
  FileContents contents_;
  bool parallel_ = false;
  FileId file_;
  std::vector<TypeId> types_;
  std::vector<DatasetId> datasets_;
};

}  // namespace ckpt::backends::hdf5
