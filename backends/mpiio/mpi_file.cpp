#include "backends/mpiio/mpi_file.hpp"

#include <utility>

#include "backends/mpi_common/group_comm.hpp"

namespace ckpt::backends::mpiio {

MpiFile::~MpiFile() {
  if (is_open() && mpi::mpi_active()) MPI_File_close(&handle_);
}

MpiFile::MpiFile(MpiFile&& other) noexcept : handle_(std::exchange(other.handle_, MPI_FILE_NULL)) {}

MpiFile& MpiFile::operator=(MpiFile&& other) noexcept {
  if (this != &other) {
    if (is_open() && mpi::mpi_active()) MPI_File_close(&handle_);
    handle_ = std::exchange(other.handle_, MPI_FILE_NULL);
  }
  return *this;
}

int MpiFile::close() {
  if (!is_open()) return MPI_SUCCESS;
  const int code = MPI_File_close(&handle_);
  handle_ = MPI_FILE_NULL;
  return code;
}

Datatype::~Datatype() {
  release();
}

Datatype::Datatype(Datatype&& other) noexcept
    : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}

Datatype& Datatype::operator=(Datatype&& other) noexcept {
  if (this != &other) {
    release();
    type_ = std::exchange(other.type_, MPI_DATATYPE_NULL);
  }
  return *this;
}

int Datatype::create_hindexed(int count, const int* lengths, const MPI_Aint* displacements) {
  release();
  int code = MPI_Type_create_hindexed(count, lengths, displacements, MPI_BYTE, &type_);
  if (code != MPI_SUCCESS) {
    type_ = MPI_DATATYPE_NULL;
    return code;
  }
  code = MPI_Type_commit(&type_);
  if (code != MPI_SUCCESS) release();
  return code;
}

void Datatype::release() noexcept {
  if (type_ != MPI_DATATYPE_NULL && mpi::mpi_active()) MPI_Type_free(&type_);
  type_ = MPI_DATATYPE_NULL;
}

}  // namespace ckpt::backends::mpiio
