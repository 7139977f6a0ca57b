#include "harness/load/weight_loader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <span>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <stdexcept>
#include <utility>

#include "harness/common/elapsed.hpp"
#include "harness/load/chunk_pipeline.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kPage = 4096;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// Host destinations take the reads directly; device ones through `bounce` (host memory), a chunk at a time.
// Ranges of one file follow each other (a plan groups them by file): one descriptor for each run.
void load_by_read(const std::vector<LoadFile>& files, Buffer& destination, const Buffer* bounce, LoadTiming& timing) {
  const bool device = bounce != nullptr;
  std::unique_ptr<PosixFd> fd;
  const std::string* open_path = nullptr;
  for (const LoadFile& f : files) {
    if (open_path == nullptr || *open_path != f.path) {
      fd.reset();
      fd = std::make_unique<PosixFd>(f.path, O_RDONLY);
      open_path = &f.path;
    }
    const std::uint64_t step = device ? bounce->size() : std::max<std::uint64_t>(f.size, 1);
    for (std::uint64_t at = 0; at < f.size; at += step) {
      const std::uint64_t length = std::min(step, f.size - at);
      std::byte* into = device ? bounce->view().data : destination.view().data + f.destination_offset + at;
      ++timing.reads;
      if (read_fully(fd->get(), f.path, into, f.file_offset + at, length) != length) {
        load_io_error("read (file shorter than planned)", f.path, f.file_offset + at, EIO);
      }
      if (!device) continue;
      const auto copy_start = Clock::now();
      destination.copy_from_host(f.destination_offset + at, {into, length});
      timing.copy_seconds += seconds_since(copy_start);
    }
  }
}

// A whole file mapped read-only, unmapped on destruction.
class FileMapping {
 public:
  explicit FileMapping(const std::string& path) : path_(path) {
    const PosixFd fd(path, O_RDONLY);
    const off_t end = ::lseek(fd.get(), 0, SEEK_END);
    if (end < 0) load_io_error("lseek", path, 0, errno);
    size_ = static_cast<std::uint64_t>(end);
    if (size_ == 0) return;
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (map_ == MAP_FAILED) load_io_error("mmap", path, 0, errno);
  }
  ~FileMapping() {
    if (map_ != MAP_FAILED && size_ > 0) ::munmap(map_, size_);
  }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  const std::string& path() const { return path_; }
  std::span<const std::byte> bytes(std::uint64_t offset, std::uint64_t length) const {
    if (offset + length > size_) load_io_error("mmap (file shorter than planned)", path_, offset, EIO);
    return {static_cast<const std::byte*>(map_) + offset, length};
  }

 private:
  std::string path_;
  std::uint64_t size_ = 0;
  void* map_ = MAP_FAILED;
};

// Each file mapped once for the ranges that follow each other in it; the pages fault in during
// the copy, as safetensors' loader's do.
void load_by_mmap(const std::vector<LoadFile>& files, Buffer& destination, double& copy_seconds) {
  std::unique_ptr<FileMapping> mapping;
  for (const LoadFile& f : files) {
    if (f.size == 0) continue;
    if (!mapping || mapping->path() != f.path) {
      mapping.reset();
      mapping = std::make_unique<FileMapping>(f.path);
    }
    const std::span<const std::byte> bytes = mapping->bytes(f.file_offset, f.size);
    const auto copy_start = Clock::now();
    destination.copy_from_host(f.destination_offset, bytes);
    copy_seconds += seconds_since(copy_start);
  }
}

void check_settings(const LoadSettings& s) {
  if (s.threads < 1) throw std::invalid_argument("load.threads must be at least 1");
  if (s.chunk_bytes == 0 || s.chunk_bytes % kPage != 0) {
    throw std::invalid_argument(fmt::format("load.chunk_bytes = {} must be a positive multiple of 4096", s.chunk_bytes));
  }
  if (s.pool_bytes < s.chunk_bytes) {
    throw std::invalid_argument(fmt::format("load.pool_bytes = {} must hold at least one chunk (load.chunk_bytes = {})",
                                            s.pool_bytes, s.chunk_bytes));
  }
}

}  // namespace

std::vector<LoadFile> place_files(const std::vector<std::pair<std::string, std::uint64_t>>& paths_and_sizes) {
  std::vector<LoadFile> files;
  std::uint64_t next = 0;
  for (const auto& entry : paths_and_sizes) {
    files.push_back({entry.first, entry.second, next});
    next = align_up(next + entry.second, kPage);
  }
  return files;
}

std::uint64_t destination_bytes(const std::vector<LoadFile>& files) {
  std::uint64_t end = 0;
  for (const LoadFile& f : files) end = std::max(end, f.destination_offset + f.size);
  return align_up(end, kPage);
}

LoadTiming load_files(const std::vector<LoadFile>& files, Buffer& destination, const LoadSettings& settings,
                      MemorySpace& pool_space) {
  check_settings(settings);
  LoadTiming timing;
  for (const LoadFile& f : files) timing.bytes += f.size;
  if (destination.size() < destination_bytes(files)) {
    throw std::invalid_argument(fmt::format("load: the destination holds {} bytes, the files need {}", destination.size(),
                                            destination_bytes(files)));
  }
  const bool device = destination.view().kind == backends::MemoryKind::device;
  std::unique_ptr<Buffer> pool;
  if (settings.method == LoadMethod::pipelined) pool = make_chunk_pool(files, settings, pool_space);
  if (settings.method == LoadMethod::read && device) pool = pool_space.allocate(slot_bytes(files, settings));
  const auto start = Clock::now();
  switch (settings.method) {
    case LoadMethod::read: load_by_read(files, destination, pool.get(), timing); break;
    case LoadMethod::mmap: load_by_mmap(files, destination, timing.copy_seconds); break;
    case LoadMethod::pipelined: load_pipelined(files, destination, settings, *pool, timing); break;
  }
  timing.seconds = seconds_since(start);
  return timing;
}

}  // namespace ckpt::harness
