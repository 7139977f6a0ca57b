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

// A collective round's limit per process: the largest of `extents`, at most kMaxRequestBytes.
// The harness has already cut the plan at strategy.chunk_bytes, so a plan cut at 1 MiB makes one
// collective call of 1 MiB per process per round, as IOR's transfer size (-t) does. 0: no bytes.
std::uint64_t round_limit(const std::vector<Extent>& extents);

// This process's collective rounds for `extents`: in file order, cut and packed into rounds of at
// most round_limit(extents) bytes, no two pieces of a round overlapping in the file (a piece that
// would starts the next round). 0 for no bytes; ceil(bytes / chunk) for a contiguous run of
// extents of one chunk each and a shorter last one; one round a copy for extents read twice.
std::size_t round_count(const std::vector<Extent>& extents);

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

// What transfer_collective did: the collective calls every process made, and this process's limit.
struct CollectiveRounds {
  int rounds = 0;           // the largest round_count over the file's communicator
  std::uint64_t limit = 0;  // the largest round_limit over the file's communicator
  bool contiguous = false;  // every round one piece per process: explicit offsets, no file view
};

// MPI_File_write_at_all / MPI_File_read_at_all: the file's extents in file order, in rounds of at
// most round_limit(extents) whose pieces do not overlap in the file (a read may name bytes more
// than once), as many rounds on every process of the file's communicator (the
// largest round_count, agreed with one MPI_Allreduce of the count, the limit and the most pieces
// in a round). When no process has more than one piece in a round, each call takes its piece at
// an explicit offset, contiguous; otherwise each round sets an hindexed file view. A process with
// nothing left takes part with a count of 0. Collective over file.comm. Records errors in
// `errors` and still makes every round.
CollectiveRounds transfer_collective(const OpenedFile& file, const TransferContext& context,
                                     PhaseErrors& errors);

}  // namespace ckpt::backends::mpiio
