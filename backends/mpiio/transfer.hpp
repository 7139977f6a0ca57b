#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/mpiio/mpi_file.hpp"
#include "backends/mpiio/phase_errors.hpp"

namespace ckpt::backends::mpiio {

// MPI counts are C ints: no single request or collective round moves more than this per process.
inline constexpr std::uint64_t kMaxRequestBytes = std::uint64_t{1} << 30;

// One distinct path of a plan, opened on the communicator of the processes that access it.
struct OpenedFile {
  std::string path;
  MPI_Comm comm = MPI_COMM_SELF;  // owned by the plan's FileComms
  bool shared = false;
  MpiFile file;
  std::vector<Extent> extents;  // of every FilePlan naming this path, in submission order
};

// What a transfer moves and how.
struct TransferContext {
  std::string_view backend;
  std::byte* memory = nullptr;
  bool writing = true;
  MPI_Info info = MPI_INFO_NULL;  // hints for MPI_File_set_view
};

// Read: throws IoError naming the path when an extent reaches beyond the end of the file.
void check_within_file(const OpenedFile& file, std::string_view backend);

// MPI_File_write_at / MPI_File_read_at for each extent in submission order, in requests of at
// most kMaxRequestBytes. Throws IoError on an MPI error or a short transfer.
void transfer_independent(const OpenedFile& file, const TransferContext& context);

// MPI_File_write_at_all / MPI_File_read_at_all over an hindexed file view: the file's extents in
// file order, in rounds of at most kMaxRequestBytes, as many rounds on every process of the
// file's communicator (agreed with MPI_Allreduce); a process with nothing left takes part with a
// count of 0. Collective over file.comm. Records errors in `errors` and still makes every round.
void transfer_collective(const OpenedFile& file, const TransferContext& context,
                         PhaseErrors& errors);

}  // namespace ckpt::backends::mpiio
