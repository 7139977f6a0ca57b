#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

// One file this process touches. Its directory exists before the plan runs. On write, a file
// is opened with O_CREAT (never O_TRUNC: shared files are written by several processes).
struct FilePlan {
  std::string path;
  std::vector<Extent> extents;  // non-overlapping in the file and in memory, in submission order
  std::uint64_t file_size = 0;  // end of what this plan reserves with fallocate: [reserve_offset, file_size)
  std::uint64_t reserve_offset = 0;  // a shared file's writer reserves its own region only
  bool shared = false;          // other processes write other extents of this file
};

// What one process writes or reads for one checkpoint.
struct IoPlan {
  std::vector<FilePlan> files;

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
  bool ok() const { return !error; }
};

struct Capabilities {
  bool direct_io = false;
  bool device_memory = false;
  bool shared_file = false;
  bool collective = false;
  int max_queue_depth = 1;
  bool stores_data = true;  // false for null: a restore reads nothing back, so nothing can be verified
};

// An I/O failure with its context: "<backend>: <operation> <path> at offset O, length L: <errno text>".
class IoError : public std::runtime_error {
 public:
  IoError(std::string_view backend, std::string_view operation, const std::string& path, int error_number,
          std::uint64_t offset = 0, std::uint64_t length = 0);
  explicit IoError(const std::string& message) : std::runtime_error(message) {}
  int error_number() const noexcept { return errno_; }

 private:
  int errno_ = 0;
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

  IoOutcome write(const IoPlan& plan, MemoryView memory);
  IoOutcome read(const IoPlan& plan, MemoryView memory);

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
  virtual void transfer(OpenFiles& files, const IoPlan& plan, MemoryView memory, Direction direction) = 0;
  // Write: applies the sync policy to every file. Read: nothing. Throws IoError.
  virtual void sync(OpenFiles& files, Direction direction) = 0;
  // Closes every file. Throws IoError.
  virtual void close(OpenFiles& files) = 0;

 private:
  IoOutcome run(const IoPlan& plan, MemoryView memory, Direction direction);
};

}  // namespace ckpt::backends
