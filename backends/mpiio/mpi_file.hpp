#pragma once

#include <mpi.h>

#include <string>

namespace ckpt::backends::mpiio {

// An open MPI_File. Move-only. close() is collective over the communicator the file was opened
// on; the destructor closes a file still open (after an error) and ignores the result, so every
// process of a shared file must destroy its handles at the same point and in the same order.
class MpiFile {
 public:
  MpiFile() = default;
  explicit MpiFile(MPI_File handle) : handle_(handle) {}
  ~MpiFile();
  MpiFile(MpiFile&& other) noexcept;
  MpiFile& operator=(MpiFile&& other) noexcept;
  MpiFile(const MpiFile&) = delete;
  MpiFile& operator=(const MpiFile&) = delete;

  MPI_File get() const { return handle_; }
  bool is_open() const { return handle_ != MPI_FILE_NULL; }
  // MPI_File_close; returns its code. The handle is released either way.
  int close();

 private:
  MPI_File handle_ = MPI_FILE_NULL;
};

// A committed MPI datatype, freed on destruction. Move-only.
class Datatype {
 public:
  Datatype() = default;
  ~Datatype();
  Datatype(Datatype&& other) noexcept;
  Datatype& operator=(Datatype&& other) noexcept;
  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  // MPI_Type_create_hindexed + MPI_Type_commit; returns the first failing call's code.
  int create_hindexed(int count, const int* lengths, const MPI_Aint* displacements);
  MPI_Datatype get() const { return type_; }

 private:
  void release() noexcept;

  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

}  // namespace ckpt::backends::mpiio
