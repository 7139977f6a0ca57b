#include "harness/load/chunk_pipeline.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <chrono>

namespace ckpt::harness {

PosixFd::PosixFd(const std::string& path, int flags) {
  do {
    fd_ = ::open(path.c_str(), flags | O_CLOEXEC);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) load_io_error((flags & O_DIRECT) != 0 ? "open (O_DIRECT)" : "open", path, 0, errno);
}

PosixFd::~PosixFd() {
  if (fd_ >= 0) ::close(fd_);
}

void load_io_error(std::string_view operation, const std::string& path, std::uint64_t offset, int error) {
  throw std::runtime_error(fmt::format("load: {} {} at offset {}: {}", operation, path, offset, std::strerror(error)));
}

std::uint64_t read_fully(int fd, const std::string& path, std::byte* into, std::uint64_t offset, std::uint64_t length) {
  std::uint64_t done = 0;
  while (done < length) {
    const ssize_t n = ::pread(fd, into + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) load_io_error("pread", path, offset + done, errno);
    if (n == 0) break;
    done += static_cast<std::uint64_t>(n);
  }
  return done;
}

namespace {

struct Chunk {
  std::size_t file = 0;      // index in the LoadFile ranges
  std::uint64_t offset = 0;  // in the range
  std::uint64_t length = 0;  // bytes of the range in the chunk
};

constexpr std::uint64_t kBlock = 4096;

// Under O_DIRECT a chunk's read starts at the block below its first byte, so a slot holds one
// block more than a chunk.
std::uint64_t slot_stride(std::uint64_t slot, bool direct) { return direct ? slot + kBlock : slot; }

struct Filled {
  std::size_t work = 0;
  int slot = 0;
};

// Reader threads and the copying thread meet here: free slots go to readers, filled ones to the
// copier. The first error stops everyone.
class ChunkPool {
 public:
  explicit ChunkPool(int slots) {
    for (int i = 0; i < slots; ++i) free_.push_back(i);
  }
  // A free slot, or -1 once stopped.
  int take_free() {
    std::unique_lock lock(mutex_);
    free_ready_.wait(lock, [this] { return stopped_ || !free_.empty(); });
    if (stopped_) return -1;
    const int slot = free_.front();
    free_.pop_front();
    return slot;
  }
  void give_back(int slot) {
    {
      const std::lock_guard lock(mutex_);
      free_.push_back(slot);
    }
    free_ready_.notify_one();
  }
  void filled(Filled f) {
    {
      const std::lock_guard lock(mutex_);
      filled_.push_back(f);
    }
    filled_ready_.notify_one();
  }
  // The next filled slot; false once stopped by an error.
  bool take_filled(Filled& out) {
    std::unique_lock lock(mutex_);
    filled_ready_.wait(lock, [this] { return !error_.empty() || !filled_.empty(); });
    if (!error_.empty()) return false;
    out = filled_.front();
    filled_.pop_front();
    return true;
  }
  void fail(const std::string& error) {
    {
      const std::lock_guard lock(mutex_);
      if (error_.empty()) error_ = error;
      stopped_ = true;
    }
    free_ready_.notify_all();
    filled_ready_.notify_all();
  }
  void stop() { fail_quietly(); }
  std::string error() {
    const std::lock_guard lock(mutex_);
    return error_;
  }

 private:
  void fail_quietly() {
    {
      const std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    free_ready_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable free_ready_, filled_ready_;
  std::deque<int> free_;
  std::deque<Filled> filled_;
  std::string error_;
  bool stopped_ = false;
};

std::vector<Chunk> chunks_of(const std::vector<LoadFile>& files, std::uint64_t chunk_bytes) {
  std::vector<Chunk> chunks;
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::uint64_t at = 0; at < files[i].size; at += chunk_bytes) {
      chunks.push_back({i, at, std::min(chunk_bytes, files[i].size - at)});
    }
  }
  return chunks;
}

struct ReaderContext {
  const std::vector<LoadFile>& files;
  const std::vector<Chunk>& chunks;
  const std::vector<std::unique_ptr<PosixFd>>& fds;
  const std::vector<std::size_t>& fd_of;  // per range: its file's descriptor in fds
  std::byte* pool;
  std::uint64_t stride;                   // bytes between slots
  bool direct;
  std::atomic<std::size_t>& next;
  ChunkPool& slots;
};

// Where a chunk's bytes start in its slot: 0, or under O_DIRECT their distance from the block below.
std::uint64_t lead_of(const LoadFile& f, const Chunk& c, bool direct) {
  return direct ? (f.file_offset + c.offset) % kBlock : 0;
}

// One reader thread: takes the next chunk, waits for a free slot, reads the chunk into it (whole
// 4096-byte blocks under O_DIRECT, from the block below its first byte; the file's end reads
// short) and hands it to the copier.
void read_chunks(const ReaderContext& ctx) {
  try {
    for (std::size_t w = ctx.next.fetch_add(1); w < ctx.chunks.size(); w = ctx.next.fetch_add(1)) {
      const int slot = ctx.slots.take_free();
      if (slot < 0) return;
      const Chunk& c = ctx.chunks[w];
      const LoadFile& f = ctx.files[c.file];
      std::byte* into = ctx.pool + static_cast<std::uint64_t>(slot) * ctx.stride;
      const std::uint64_t lead = lead_of(f, c, ctx.direct);
      const std::uint64_t at = f.file_offset + c.offset - lead;
      const std::uint64_t request = ctx.direct ? (lead + c.length + kBlock - 1) / kBlock * kBlock : c.length;
      if (read_fully(ctx.fds[ctx.fd_of[c.file]]->get(), f.path, into, at, request) < lead + c.length) {
        load_io_error("pread (file shorter than planned)", f.path, at, EIO);
      }
      ctx.slots.filled({w, slot});
    }
  } catch (const std::exception& e) {
    ctx.slots.fail(e.what());
  }
}

}  // namespace

std::uint64_t slot_bytes(const std::vector<LoadFile>& files, const LoadSettings& settings) {
  std::uint64_t largest = 0;
  for (const LoadFile& f : files) largest = std::max(largest, f.size);
  return std::max<std::uint64_t>(4096, std::min(settings.chunk_bytes, (largest + 4095) / 4096 * 4096));
}

std::unique_ptr<Buffer> make_chunk_pool(const std::vector<LoadFile>& files, const LoadSettings& settings,
                                        MemorySpace& space) {
  const std::uint64_t slot = slot_bytes(files, settings);
  const std::uint64_t chunks = chunks_of(files, slot).size();
  const std::uint64_t stride = slot_stride(slot, settings.direct);
  const std::uint64_t slots = std::max<std::uint64_t>(1, std::min(settings.pool_bytes / stride, chunks));
  return space.allocate(slots * stride);
}

int load_pipelined(const std::vector<LoadFile>& files, Buffer& destination, const LoadSettings& settings,
                   const Buffer& pool, double& copy_seconds) {
  const std::uint64_t slot = slot_bytes(files, settings);
  const std::vector<Chunk> chunks = chunks_of(files, slot);
  const std::uint64_t stride = slot_stride(slot, settings.direct);
  const int slots = static_cast<int>(pool.size() / stride);
  std::byte* const chunks_memory = pool.view().data;
  // One descriptor per file, however many of its ranges are loaded.
  std::vector<std::unique_ptr<PosixFd>> fds;
  std::vector<std::size_t> fd_of;
  std::map<std::string, std::size_t> fd_by_path;
  for (const LoadFile& f : files) {
    const auto [it, added] = fd_by_path.try_emplace(f.path, fds.size());
    if (added) fds.push_back(std::make_unique<PosixFd>(f.path, O_RDONLY | (settings.direct ? O_DIRECT : 0)));
    fd_of.push_back(it->second);
  }
  ChunkPool pool_slots(slots);
  std::atomic<std::size_t> next{0};
  const ReaderContext ctx{files, chunks, fds, fd_of, chunks_memory, stride, settings.direct, next, pool_slots};
  std::vector<std::jthread> readers;
  for (int t = 0; t < settings.threads; ++t) readers.emplace_back(read_chunks, std::cref(ctx));
  Filled f;
  for (std::size_t copied = 0; copied < chunks.size() && pool_slots.take_filled(f); ++copied) {
    const Chunk& c = chunks[f.work];
    const auto copy_start = std::chrono::steady_clock::now();
    const std::uint64_t lead = lead_of(files[c.file], c, settings.direct);
    destination.copy_from_host(files[c.file].destination_offset + c.offset,
                               {chunks_memory + static_cast<std::uint64_t>(f.slot) * stride + lead, c.length});
    copy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - copy_start).count();
    pool_slots.give_back(f.slot);
  }
  pool_slots.stop();
  readers.clear();  // joins
  if (const std::string error = pool_slots.error(); !error.empty()) throw std::runtime_error(error);
  return slots;
}

}  // namespace ckpt::harness
