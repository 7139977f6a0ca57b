#include "harness/load/weight_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "harness/common/align.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/load/chunk_pipeline.hpp"
#include "harness/load/load_storage.hpp"

namespace ckpt::harness {
namespace {

constexpr std::uint64_t kPage = 4096;

// One part of a file: `extents` of `path`.
backends::IoPlan file_part(const std::string& path, std::vector<backends::Extent> extents) {
  backends::IoPlan part;
  part.files.push_back({.path = path, .extents = std::move(extents)});
  return part;
}

// Host destinations take each run of ranges of one file in one transfer, straight into place;
// device ones go through `bounce` (host memory), a bounce buffer at a time. Ranges of one file
// follow each other (a plan groups them by file): the reader keeps the file open across them.
void load_by_read(const FileRanges& plan, Buffer& destination, const Buffer* bounce,
                  backends::Backend& backend, LoadTiming& timing) {
  PlanExecutor reader(backend, false, kFileReader);
  const std::vector<ByteRange>& ranges = plan.ranges;
  for (std::size_t i = 0; i < ranges.size();) {
    const ByteRange& f = ranges[i];
    const std::string& path = plan.files[f.file];
    if (bounce == nullptr) {
      std::vector<backends::Extent> run;
      for (; i < ranges.size() && ranges[i].file == f.file; ++i) {
        if (ranges[i].length > 0) run.push_back(ranges[i].extent());
      }
      timing.reads += run.size();
      if (!run.empty()) read_part(reader, file_part(path, std::move(run)), destination.view());
      continue;
    }
    for (std::uint64_t at = 0; at < f.length; at += bounce->size()) {
      const std::uint64_t length = std::min(bounce->size(), f.length - at);
      ++timing.reads;
      read_part(reader, file_part(path, {{f.file_offset + at, 0, length}}), bounce->view());
      const auto copy_start = Clock::now();
      destination.copy_from_host(f.memory_offset + at, {bounce->view().data, length});
      timing.copy_seconds += seconds_since(copy_start);
    }
    ++i;
  }
  timing.counters = finish_reads(reader);
}

// A collective backend: the process's ranges, file by file, in one Backend::read through the
// executor, which every process of the backend's group makes together (even with no ranges), into
// place; device destinations through `whole`, a host buffer of the destination's size. Every file
// is marked shared: the backend opens each on the processes that read it (a file only this
// process reads, alone), and its collective mode (backend.mpiio.collective) reads a file several
// processes read in collective calls, whatever ranges each of them names.
void load_by_collective_read(const FileRanges& plan, Buffer& destination, const Buffer* whole,
                             backends::Backend& backend, LoadTiming& timing) {
  backends::IoPlan read;
  for (const std::string& path : plan.files) read.files.push_back({.path = path, .shared = true});
  for (const ByteRange& r : plan.ranges) {
    if (r.length == 0) continue;
    read.files[r.file].extents.push_back(r.extent());
    ++timing.reads;
  }
  const backends::MemoryView memory = whole == nullptr ? destination.view() : whole->view();
  Execution done = execute_plans(backend, {{&read, memory, 0, "load"}}, false);
  if (!done.error.empty()) throw std::runtime_error(done.error);
  timing.counters = std::move(done.counters);
  timing.notes = std::move(done.notes);
  if (whole == nullptr) return;
  const auto copy_start = Clock::now();
  for (const ByteRange& r : plan.ranges)
    destination.copy_from_host(r.memory_offset, {whole->view().data + r.memory_offset, r.length});
  timing.copy_seconds += seconds_since(copy_start);
}

// Each file mapped once by the backend for the ranges that follow each other in it; the pages
// fault in during the copy, as safetensors' loader's do.
void load_by_mmap(const FileRanges& plan, Buffer& destination, backends::Backend& backend,
                  double& copy_seconds) {
  std::unique_ptr<backends::MappedFile> mapping;
  std::optional<std::size_t> mapped;
  for (const ByteRange& f : plan.ranges) {
    if (f.length == 0) continue;
    const std::string& path = plan.files[f.file];
    if (mapped != f.file) {
      mapping.reset();
      try {
        mapping = backend.map(path);
      } catch (const backends::IoError& e) {
        throw std::runtime_error(std::string("load: ") + e.what());
      }
      mapped = f.file;
    }
    const std::span<const std::byte> whole = mapping->bytes();
    if (f.file_offset + f.length > whole.size()) {
      load_io_error("mmap (file shorter than planned)", path, f.file_offset, EIO);
    }
    const auto copy_start = Clock::now();
    destination.copy_from_host(f.memory_offset, whole.subspan(f.file_offset, f.length));
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

FileRanges place_files(const std::vector<std::pair<std::string, std::uint64_t>>& paths_and_sizes) {
  FileRanges placed;
  std::uint64_t next = 0;
  for (const auto& [path, size] : paths_and_sizes) {
    placed.ranges.push_back({placed.files.size(), 0, next, size});
    placed.files.push_back(path);
    next = align_up(next + size, kPage);
  }
  return placed;
}

std::uint64_t destination_bytes(const FileRanges& ranges) {
  std::uint64_t end = 0;
  for (const ByteRange& r : ranges.ranges) end = std::max(end, r.memory_offset + r.length);
  return align_up(end, kPage);
}

LoadTiming load_files(const FileRanges& ranges, Buffer& destination, const LoadSettings& settings,
                      MemorySpace& pool_space, const LoadStorage& storage) {
  check_settings(settings);
  LoadTiming timing;
  timing.bytes = ranges.bytes();
  if (destination.size() < destination_bytes(ranges)) {
    throw std::invalid_argument(
        fmt::format("load: the destination holds {} bytes, the files need {}", destination.size(),
                    destination_bytes(ranges)));
  }
  const bool device = destination.view().kind == backends::MemoryKind::device;
  std::unique_ptr<Buffer> pool;
  if (settings.method == LoadMethod::pipelined)
    pool = make_chunk_pool(ranges, settings, pool_space);
  // One backend a reader thread (a backend is driven by one thread at a time); read and mmap read
  // from the calling thread. O_DIRECT is the pipelined method's only.
  const bool pipelined = settings.method == LoadMethod::pipelined;
  std::vector<std::unique_ptr<backends::Backend>> backends;
  for (int t = 0; t < (pipelined ? settings.threads : 1); ++t) {
    backends.push_back(make_load_backend(storage, pipelined && settings.direct));
  }
  const bool collective = backends.front()->capabilities().collective;
  if (settings.method == LoadMethod::read && device) {
    pool = pool_space.allocate(collective ? std::max(destination.size(), kPage)
                                          : slot_bytes(ranges, settings));
  }
  const auto start = Clock::now();
  switch (settings.method) {
    case LoadMethod::read:
      if (collective) {
        load_by_collective_read(ranges, destination, pool.get(), *backends.front(), timing);
      } else {
        load_by_read(ranges, destination, pool.get(), *backends.front(), timing);
      }
      break;
    case LoadMethod::mmap:
      load_by_mmap(ranges, destination, *backends.front(), timing.copy_seconds);
      break;
    case LoadMethod::pipelined:
      load_pipelined(ranges, destination, settings, *pool, backends, timing);
      break;
  }
  timing.seconds = seconds_since(start);
  return timing;
}

}  // namespace ckpt::harness
