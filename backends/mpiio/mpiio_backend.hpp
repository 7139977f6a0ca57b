#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/mpi_common/group_comm.hpp"
#include "backends/mpi_common/info_hints.hpp"

namespace ckpt::backends::mpiio {

// [backend.mpiio] options other than the hints.
struct MpiioOptions {
  bool collective = false;  // MPI_File_write_at_all / read_at_all instead of write_at / read_at
};

// Parses the options against mpiio::option_table(), defaults applied.
// Throws std::invalid_argument naming `backend.mpiio.collective`.
MpiioOptions parse_mpiio_options(const BackendOptions& options);

// MPI-IO through the MPI library's own implementation (ROMIO or Open MPI's OMPIO). Every file of
// a plan is opened on the communicator of the processes that access it (mpi::FileComms): a
// shared file collectively by its writers, any other file on MPI_COMM_SELF. Independent mode
// moves each extent with MPI_File_write_at / read_at; collective mode makes
// MPI_File_write_at_all / read_at_all per file in rounds of at most the plan's largest request
// (strategy.chunk_bytes when set; at most 1 GiB) through an hindexed file view, and notes the
// rounds made.
//
// Collective over the process group: every process of the group constructs its backend together
// and calls write() or read() together, once per checkpoint with its whole plan
// (capabilities().collective). Each phase ends by agreeing over the group whether any process
// failed it, so that all processes leave the collective sequence together; a phase's time thus
// includes waiting for the slowest process. Host and pinned memory only; no O_DIRECT.
class MpiioBackend final : public Backend {
 public:
  // Throws std::invalid_argument naming the setting or option: `direct` (MPI-IO has no O_DIRECT),
  // `fallocate` (MPI_File_preallocate rewrites the file; see README), `threads` other than 1,
  // `queue_depth` other than 1, `sqpoll`, a bad `backend.mpiio.collective`
  // or `backend.mpiio.hints.<key>`, or MPI not initialised.
  MpiioBackend(const IoSettings& settings, const BackendOptions& options = {},
               const ProcessGroup& group = {});

  std::string_view name() const override { return "mpiio"; }
  Capabilities capabilities() const override;
  // The MPI-IO hints the last write or read's first file reports in effect, and fdatasync
  // served by MPI_File_sync.
  std::vector<std::string> notes() const override { return notes_; }

 protected:
  // Opens every distinct path of the plan (write: MPI_MODE_CREATE | MPI_MODE_WRONLY, never
  // truncating; read: MPI_MODE_RDONLY) with the hints, in path order, on its communicator;
  // Collective over the group. Throws IoError with the path and the MPI error text.
  std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) override;
  // Moves every extent (see the class comment); reads first check that the file holds every
  // extent. Throws IoError on an MPI error or a short transfer, on every process of the group.
  void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                Direction direction) override;
  // Write with a sync policy: MPI_File_sync on every file (collective over its communicator).
  void sync(OpenFiles& files, Direction direction) override;
  // MPI_File_close on every file, in path order. Throws IoError for the first that failed.
  void close(OpenFiles& files) override;

 private:
  class Files;

  void note_hints(MPI_File file);
  void add_note(const std::string& note);  // once per distinct text

  IoSettings settings_;
  MpiioOptions options_;
  mpi::GroupComm group_;
  mpi::InfoHints hints_;
  std::vector<std::string> notes_;
};

}  // namespace ckpt::backends::mpiio
