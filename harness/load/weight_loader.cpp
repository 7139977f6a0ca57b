#include "harness/load/weight_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

#include "harness/common/elapsed.hpp"
#include "harness/load/chunk_pipeline.hpp"
#include "harness/load/load_storage.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kPage = 4096;

std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

// One part of a file: `extent` of `path`.
backends::FilePlan file_part(const std::string& path, const backends::Extent& extent) {
  return {.path = path, .extents = {extent}};
}

// Host destinations take each run of ranges of one file in one transfer, straight into place;
// device ones go through `bounce` (host memory), a bounce buffer at a time. Ranges of one file
// follow each other (a plan groups them by file): the reader keeps the file open across them.
void load_by_read(const std::vector<LoadFile>& files, Buffer& destination, const Buffer* bounce,
                  backends::Backend& backend, LoadTiming& timing) {
  RangeReader reader(backend);
  for (std::size_t i = 0; i < files.size();) {
    const LoadFile& f = files[i];
    if (bounce == nullptr) {
      backends::FilePlan run{.path = f.path};
      for (; i < files.size() && files[i].path == f.path; ++i) {
        if (files[i].size == 0) continue;
        run.extents.push_back({files[i].file_offset, files[i].destination_offset, files[i].size});
      }
      timing.reads += run.extents.size();
      if (!run.extents.empty()) reader.read(run, destination.view());
      continue;
    }
    for (std::uint64_t at = 0; at < f.size; at += bounce->size()) {
      const std::uint64_t length = std::min(bounce->size(), f.size - at);
      ++timing.reads;
      reader.read(file_part(f.path, {f.file_offset + at, 0, length}), bounce->view());
      const auto copy_start = Clock::now();
      destination.copy_from_host(f.destination_offset + at, {bounce->view().data, length});
      timing.copy_seconds += seconds_since(copy_start);
    }
    ++i;
  }
  reader.finish();
  timing.counters = reader.counters();
}

// Each file mapped once by the backend for the ranges that follow each other in it; the pages
// fault in during the copy, as safetensors' loader's do.
void load_by_mmap(const std::vector<LoadFile>& files, Buffer& destination,
                  backends::Backend& backend, double& copy_seconds) {
  std::unique_ptr<backends::MappedFile> mapping;
  const std::string* mapped = nullptr;
  for (const LoadFile& f : files) {
    if (f.size == 0) continue;
    if (mapped == nullptr || *mapped != f.path) {
      mapping.reset();
      try {
        mapping = backend.map(f.path);
      } catch (const backends::IoError& e) {
        throw std::runtime_error(std::string("load: ") + e.what());
      }
      mapped = &f.path;
    }
    const std::span<const std::byte> whole = mapping->bytes();
    if (f.file_offset + f.size > whole.size()) {
      load_io_error("mmap (file shorter than planned)", f.path, f.file_offset, EIO);
    }
    const auto copy_start = Clock::now();
    destination.copy_from_host(f.destination_offset, whole.subspan(f.file_offset, f.size));
    copy_seconds += seconds_since(copy_start);
  }
}

void check_settings(const LoadSettings& s) {
  if (s.threads < 1) throw std::invalid_argument("load.threads must be at least 1");
  if (s.chunk_bytes == 0 || s.chunk_bytes % kPage != 0) {
    throw std::invalid_argument(
        fmt::format("load.chunk_bytes = {} must be a positive multiple of 4096", s.chunk_bytes));
  }
  if (s.pool_bytes < s.chunk_bytes) {
    throw std::invalid_argument(
        fmt::format("load.pool_bytes = {} must hold at least one chunk (load.chunk_bytes = {})",
                    s.pool_bytes, s.chunk_bytes));
  }
}

}  // namespace

std::vector<LoadFile> place_files(
    const std::vector<std::pair<std::string, std::uint64_t>>& paths_and_sizes) {
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

LoadTiming load_files(const std::vector<LoadFile>& files, Buffer& destination,
                      const LoadSettings& settings, MemorySpace& pool_space,
                      const LoadStorage& storage) {
  check_settings(settings);
  LoadTiming timing;
  for (const LoadFile& f : files) timing.bytes += f.size;
  if (destination.size() < destination_bytes(files)) {
    throw std::invalid_argument(
        fmt::format("load: the destination holds {} bytes, the files need {}", destination.size(),
                    destination_bytes(files)));
  }
  const bool device = destination.view().kind == backends::MemoryKind::device;
  std::unique_ptr<Buffer> pool;
  if (settings.method == LoadMethod::pipelined) pool = make_chunk_pool(files, settings, pool_space);
  if (settings.method == LoadMethod::read && device)
    pool = pool_space.allocate(slot_bytes(files, settings));
  // One backend a reader thread (a backend is driven by one thread at a time); read and mmap read
  // from the calling thread. O_DIRECT is the pipelined method's only.
  const bool pipelined = settings.method == LoadMethod::pipelined;
  std::vector<std::unique_ptr<backends::Backend>> backends;
  for (int t = 0; t < (pipelined ? settings.threads : 1); ++t) {
    backends.push_back(make_load_backend(storage, pipelined && settings.direct));
  }
  const auto start = Clock::now();
  switch (settings.method) {
    case LoadMethod::read:
      load_by_read(files, destination, pool.get(), *backends.front(), timing);
      break;
    case LoadMethod::mmap:
      load_by_mmap(files, destination, *backends.front(), timing.copy_seconds);
      break;
    case LoadMethod::pipelined:
      load_pipelined(files, destination, settings, *pool, backends, timing);
      break;
  }
  timing.seconds = seconds_since(start);
  return timing;
}

}  // namespace ckpt::harness
