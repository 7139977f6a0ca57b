#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "backends/latency_histogram.hpp"
#include "backends/options.hpp"

namespace ckpt::backends {

enum class MemoryKind { host, pinned, device };

// Memory a backend writes from (checkpoint) or reads into (restore). Host and pinned memory
// are directly addressable; device memory only by backends whose capabilities say so.
struct MemoryView {
  std::byte* data = nullptr;
  std::uint64_t size = 0;
  MemoryKind kind = MemoryKind::host;
};

// One contiguous run: file bytes [file_offset, file_offset + length) <-> memory bytes
// [memory_offset, memory_offset + length).
struct Extent {
  std::uint64_t file_offset = 0;
  std::uint64_t memory_offset = 0;
  std::uint64_t length = 0;
};

// A tensor piece, for backends that store named, shaped datasets (hdf5); the others use only
// the extents, which describe the same bytes. The piece is elements [flat_begin, flat_end) in
// row-major order of the slice [offset, offset + extent) of a tensor of shape global_shape (the
// whole slice unless ZeRO partitions it, or model.scale shortens it); its
// (flat_end - flat_begin) x element_bytes bytes lie contiguously at memory_offset.
struct DatasetPiece {
  std::string name;   // dataset path inside the file: "<state>/<tensor name>", e.g.
                      // "weight/model.norm.weight"
  std::string dtype;  // "fp8", "bf16", "fp16", "fp32" or "fp64"
  std::uint32_t element_bytes = 2;
  std::vector<std::uint64_t> global_shape;
  std::vector<std::uint64_t> offset;  // slice start, one per dimension
  std::vector<std::uint64_t> extent;  // slice size, one per dimension
  std::uint64_t flat_begin = 0;
  std::uint64_t flat_end = 0;
  std::uint64_t memory_offset = 0;

  std::uint64_t bytes() const { return (flat_end - flat_begin) * element_bytes; }
};

// One file this process touches. Its directory exists before the plan runs. On write, a file
// is opened with O_CREAT (never O_TRUNC: shared files are written by several processes).
struct FilePlan {
  std::string path;
  std::vector<Extent> extents;  // non-overlapping in the file and in memory, in submission order
  std::uint64_t file_size =
      0;  // end of what this plan reserves with fallocate: [reserve_offset, file_size)
  std::uint64_t reserve_offset = 0;    // a shared file's writer reserves its own region only
  bool shared = false;                 // other processes write other extents of this file
  std::vector<DatasetPiece> datasets;  // the same bytes as tensor pieces (filled in by the harness)
  // Read with IoSettings::direct only: the file's size, when the last extent's length is rounded
  // up to the alignment past the end of the file (a loader reading a file of any size in whole
  // blocks). The read there comes back short, as O_DIRECT's does at the end of a file, and is
  // whole once it reaches this byte; a file ending before it is still an IoError. 0: every byte
  // of every extent is in the file. Backends with direct_io honour it.
  std::uint64_t data_end = 0;
};

// What one process writes or reads for one checkpoint.
struct IoPlan {
  std::vector<FilePlan> files;
  // Facts about the checkpoint a self-describing format records in every file (hdf5 attributes):
  // "model", "tp", "pp", "dp", "ep", "zero", "state", "scale", "ranks", ...
  std::map<std::string, std::string> attributes;

  std::uint64_t bytes() const;
  std::uint64_t extents() const;
};

enum class SyncPolicy { none, fsync, fdatasync };

// Execution settings; a backend honours those its capabilities allow and rejects the rest
// at construction with std::invalid_argument naming the setting.
struct IoSettings {
  bool direct = false;                    // O_DIRECT: memory, offsets and lengths aligned
  std::uint64_t direct_alignment = 4096;  // alignment O_DIRECT needs
  SyncPolicy sync = SyncPolicy::none;     // applied on write, inside the timed phases
  bool fallocate = false;                 // reserve file_size before writing
  int threads = 1;                        // worker threads for the transfer
  int queue_depth = 1;                    // requests in flight per thread (async backends)
  bool sqpoll = false;                    // kernel submission polling (uring); others reject it
  bool request_latency =
      false;  // measure.latency: time every request (capabilities: request_latency)
};

// Seconds spent in each phase of one write or read, measured by Backend's entry points.
struct PhaseTimes {
  double open = 0;
  double transfer = 0;
  double sync = 0;
  double close = 0;

  double total() const { return open + transfer + sync + close; }
};

struct IoOutcome {
  PhaseTimes phases;
  std::uint64_t bytes = 0;           // bytes moved; the plan's bytes when ok()
  std::optional<std::string> error;  // the first I/O error, with context
  std::vector<std::string> notes;    // conditions the results should record (e.g. a fallback)
  std::optional<LatencyHistogram>
      latency;  // IoSettings::request_latency: every request of the call
  std::map<std::string, std::uint64_t> counters;  // Backend::counters() of the call
  bool ok() const { return !error; }
};

// The processes that run the same plans at the same time, one call per process. Collective
// backends (mpiio, hdf5) build their communicators from mpi_comm; the others ignore the group.
struct ProcessGroup {
  int rank = 0;
  int size = 1;
  std::optional<int>
      mpi_comm;  // MPI_Comm_c2f() of the communicator (no MPI header here); empty: no MPI
};

// What a backend can do. The registry checks a case's IoSettings against the capabilities a
// backend declares (check_settings) before constructing it, so backends do not refuse settings
// themselves.
struct Capabilities {
  bool direct_io = false;      // O_DIRECT (backend.direct)
  bool device_memory = false;  // transfers device memory itself (else the harness stages it)
  bool shared_file = false;    // several processes write disjoint extents of one file
  bool collective = false;  // needs one write/read call per process with the whole process's plan
  bool threads = false;     // several worker threads per process (backend.threads > 1)
  bool fallocate = false;   // reserves file space first (backend.fallocate)
  bool sqpoll = false;      // kernel submission polling (backend.sqpoll)
  int max_queue_depth = 1;  // requests in flight per thread (backend.queue_depth)
  bool stores_data =
      true;  // false for null: a restore reads nothing back, so nothing can be verified
  bool raw_layout =
      true;  // each extent's bytes at its file offset (false: a self-describing format)
  // May be driven from a thread other than the one that started MPI (an engine's flush thread,
  // with MPI_THREAD_MULTIPLE for collective backends); false: advice["background_thread"] says why.
  bool background_thread = true;
  bool request_latency = false;  // times each request it issues (measure.latency)
  bool mmap = false;             // maps a whole file read-only (Backend::map): load.method = "mmap"
  // Each FilePlan is an object named from its path in an object store (s3): no directories, no
  // files on this machine; a file's bytes are written whole by one process.
  bool object_store = false;
  // Why a setting the backend lacks is absent and what to do instead, by setting name
  // ("threads", "direct", ...), appended to the refusal.
  std::map<std::string, std::string> advice;
};

// Throws std::invalid_argument naming `backend.<setting>` when `settings` asks for something
// `capabilities` lacks, or is out of range (threads or queue_depth below 1).
void check_settings(std::string_view backend, const Capabilities& capabilities,
                    const IoSettings& settings);

// An I/O failure with its context: "<backend>: <operation> <path> at offset O, length L: <errno
// text>".
class IoError : public std::runtime_error {
 public:
  IoError(std::string_view backend, std::string_view operation, const std::string& path,
          int error_number, std::uint64_t offset = 0, std::uint64_t length = 0);
  explicit IoError(const std::string& message) : std::runtime_error(message) {}
  int error_number() const noexcept { return errno_; }

 private:
  int errno_ = 0;
};

// A whole file mapped read-only into this process's memory (Backend::map), unmapped on destruction.
// Reading bytes() faults the file's pages in: the copy out of it is the I/O.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual std::span<const std::byte> bytes() const = 0;
};

// A storage backend. The public entry points check the plan against the memory view, time
// each phase (open, transfer, sync, close) and turn an IoError into IoOutcome::error, so
// implementations neither time themselves nor catch their own errors. Instances are used by
// one thread at a time; a backend may run worker threads inside transfer().
class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  virtual std::string_view name() const = 0;
  virtual Capabilities capabilities() const = 0;
  // What the last write or read fell back from or worked around, one line each (e.g. "buffer
  // registration refused: RLIMIT_MEMLOCK"); copied into IoOutcome::notes. Default: none.
  virtual std::vector<std::string> notes() const { return {}; }
  // What the last write or read counted, by name (an object store's requests by kind, retries,
  // throttling responses, back-off time): totals of that call, which callers may sum over
  // processes; copied into IoOutcome::counters. Default: none.
  virtual std::map<std::string, std::uint64_t> counters() const { return {}; }

  IoOutcome write(const IoPlan& plan, MemoryView memory);
  IoOutcome read(const IoPlan& plan, MemoryView memory);

  // Streaming, for callers that hand a plan's bytes over in parts from memory they reuse (device
  // staging through pinned chunks): begin() opens the plan's files once, Stream::transfer()
  // moves one part, Stream::finish() syncs, closes and returns the outcome. Throws
  // std::invalid_argument for collective backends, which need the whole plan in one call.
  class Stream;
  std::unique_ptr<Stream> begin(const IoPlan& plan, bool write);

  // The whole file at `path`, mapped read-only. Throws std::invalid_argument when
  // capabilities().mmap is false (naming the backend) and IoError when it cannot open or map.
  std::unique_ptr<MappedFile> map(const std::string& path);

 protected:
  enum class Direction { write, read };

  // The backend's open handles for one plan; closing happens in close(), and the destructor
  // releases anything left open after an error without throwing.
  class OpenFiles {
   public:
    virtual ~OpenFiles() = default;
  };

  // Opens (write: creates) every file of the plan. Throws IoError.
  virtual std::unique_ptr<OpenFiles> open(const IoPlan& plan, Direction direction) = 0;
  // Moves every extent. Throws IoError on the first failure or short transfer.
  virtual void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory,
                        Direction direction) = 0;
  // Write: applies the sync policy to every file. Read: nothing. Throws IoError.
  virtual void sync(OpenFiles& files, Direction direction) = 0;
  // Closes every file. Throws IoError.
  virtual void close(OpenFiles& files) = 0;
  // Maps one file (called only when capabilities().mmap). Throws IoError. Default: refuses.
  virtual std::unique_ptr<MappedFile> map_file(const std::string& path);

  // With IoSettings::request_latency, transfer() adds the latencies of the requests it issued
  // here (after joining its workers, from the calling thread); the entry points start each
  // write/read with none and hand them over in IoOutcome::latency.
  void add_request_latency(const LatencyHistogram& latencies);

 private:
  IoOutcome run(const IoPlan& plan, MemoryView memory, Direction direction);

  std::optional<LatencyHistogram> latency_;  // of the write/read in progress
};

// One streamed write or read of a plan (Backend::begin). Used by one thread; the backend must
// outlive it. Dropped without finish(), it releases its files without syncing.
class Backend::Stream {
 public:
  // Moves one part: the plan's files in the same order, each with a subset of the plan's extents
  // (and dataset pieces), memory offsets relative to `memory`. Throws std::invalid_argument for
  // a part that does not match the plan or its memory; after an I/O error, does nothing.
  void transfer(const IoPlan& part, MemoryView memory);
  bool ok() const { return outcome_.ok(); }
  // Syncs (write) and closes; phase times are open, the sum of the transfers, sync and close;
  // bytes are those the parts moved. Call once.
  IoOutcome finish();

 private:
  friend class Backend;
  Stream(Backend& backend, const IoPlan& plan, Direction direction);

  Backend& backend_;
  Direction direction_;
  std::vector<std::string> paths_;
  std::unique_ptr<OpenFiles> files_;
  IoOutcome outcome_;
};

}  // namespace ckpt::backends
