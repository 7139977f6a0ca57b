#include "harness/load/chunk_pipeline.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "harness/common/elapsed.hpp"
#include "harness/load/chunk_packing.hpp"

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

struct ReaderContext {
  const std::vector<LoadFile>& files;
  const ChunkPlan& plan;
  const std::vector<std::unique_ptr<PosixFd>>& fds;
  const std::vector<std::size_t>& fd_of;  // per range: its file's descriptor in fds
  std::byte* pool;
  std::uint64_t stride;                   // bytes between slots
  std::atomic<std::size_t>& next;
  ChunkPool& slots;
};

// One reader thread: takes the next chunk, waits for a free slot, issues the chunk's reads into it
// (under O_DIRECT whole blocks, the file's end reading short) and hands it to the copier.
void read_chunks(const ReaderContext& ctx) {
  try {
    for (std::size_t w = ctx.next.fetch_add(1); w < ctx.plan.chunks.size(); w = ctx.next.fetch_add(1)) {
      const int slot = ctx.slots.take_free();
      if (slot < 0) return;
      const PackedChunk& c = ctx.plan.chunks[w];
      const std::string& path = ctx.files[c.range].path;
      const int fd = ctx.fds[ctx.fd_of[c.range]]->get();
      std::byte* into = ctx.pool + static_cast<std::uint64_t>(slot) * ctx.stride;
      for (std::size_t r = c.first_read; r < c.first_read + c.read_count; ++r) {
        const ChunkRead& read = ctx.plan.reads[r];
        if (read_fully(fd, path, into + read.slot_offset, read.file_offset, read.length) < read.needed) {
          load_io_error("pread (file shorter than planned)", path, read.file_offset, EIO);
        }
      }
      ctx.slots.filled({w, slot});
    }
  } catch (const std::exception& e) {
    ctx.slots.fail(e.what());
  }
}

// Puts a filled chunk's ranges in place; returns the seconds it took.
double copy_chunk(const std::vector<LoadFile>& files, const ChunkPlan& plan, const PackedChunk& c,
                  const std::byte* slot_memory, Buffer& destination) {
  const auto start = Clock::now();
  for (std::size_t k = c.first_copy; k < c.first_copy + c.copy_count; ++k) {
    const ChunkCopy& copy = plan.copies[k];
    destination.copy_from_host(files[copy.range].destination_offset + copy.offset,
                               {slot_memory + copy.slot_offset, copy.length});
  }
  return seconds_since(start);
}

}  // namespace

std::uint64_t slot_bytes(const std::vector<LoadFile>& files, const LoadSettings& settings) {
  std::uint64_t largest = 0, run = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    run = (i > 0 && files[i].path == files[i - 1].path ? run : 0) + files[i].size;
    largest = std::max(largest, run);
  }
  return std::max<std::uint64_t>(kLoadBlock, std::min(settings.chunk_bytes, (largest + kLoadBlock - 1) / kLoadBlock * kLoadBlock));
}

std::unique_ptr<Buffer> make_chunk_pool(const std::vector<LoadFile>& files, const LoadSettings& settings,
                                        MemorySpace& space) {
  const std::uint64_t slot = slot_bytes(files, settings);
  const std::uint64_t chunks = pack_chunks(files, slot, settings.direct).chunks.size();
  const std::uint64_t stride = slot_stride(slot, settings.direct);
  const std::uint64_t slots = std::max<std::uint64_t>(1, std::min(settings.pool_bytes / stride, chunks));
  return space.allocate(slots * stride);
}

void load_pipelined(const std::vector<LoadFile>& files, Buffer& destination, const LoadSettings& settings,
                    const Buffer& pool, LoadTiming& timing) {
  const std::uint64_t slot = slot_bytes(files, settings);
  const ChunkPlan plan = pack_chunks(files, slot, settings.direct);
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
  const ReaderContext ctx{files, plan, fds, fd_of, chunks_memory, stride, next, pool_slots};
  std::vector<std::jthread> readers;
  for (int t = 0; t < settings.threads; ++t) readers.emplace_back(read_chunks, std::cref(ctx));
  Filled f;
  for (std::size_t copied = 0; copied < plan.chunks.size() && pool_slots.take_filled(f); ++copied) {
    timing.copy_seconds += copy_chunk(files, plan, plan.chunks[f.work],
                                      chunks_memory + static_cast<std::uint64_t>(f.slot) * stride, destination);
    pool_slots.give_back(f.slot);
  }
  pool_slots.stop();
  readers.clear();  // joins
  if (const std::string error = pool_slots.error(); !error.empty()) throw std::runtime_error(error);
  timing.pool_chunks = slots;
  timing.reads = plan.reads.size();
}

}  // namespace ckpt::harness
