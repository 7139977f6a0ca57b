#include "harness/load/chunk_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "harness/common/bounded_slots.hpp"
#include "harness/common/elapsed.hpp"
#include "harness/load/chunk_packing.hpp"
#include "harness/load/load_storage.hpp"

namespace ckpt::harness {

void load_io_error(std::string_view operation, const std::string& path, std::uint64_t offset,
                   int error) {
  throw std::runtime_error(
      fmt::format("load: {} {} at offset {}: {}", operation, path, offset, std::strerror(error)));
}

void read_part(PlanExecutor& reader, const backends::IoPlan& part, backends::MemoryView memory) {
  if (!reader.call({&part, memory, 0, "load"})) throw std::runtime_error(reader.done().error);
}

std::map<std::string, std::uint64_t> finish_reads(PlanExecutor& reader) {
  Execution done = reader.finish();
  if (!done.error.empty()) throw std::runtime_error(done.error);
  return std::move(done.counters);
}

namespace {

// Reader threads and the copying thread meet here: free slots go to readers, filled ones (with
// the index of the chunk each holds) to the copier. The first error stops everyone.
using ChunkPool = BoundedSlots<std::size_t>;

struct ReaderContext {
  const FileRanges& ranges;
  const ChunkPlan& plan;
  // Under O_DIRECT, each file's size (by its index in ranges.files; empty when buffered): a chunk's
  // last block may reach past it (FilePlan::data_end).
  const std::vector<std::uint64_t>& sizes;
  std::byte* pool;
  std::uint64_t stride;  // bytes between slots
  backends::MemoryKind kind;
  std::atomic<std::size_t>& next;
  ChunkPool& slots;
};

// A chunk's reads as one part of its file, into its slot (memory offsets within the slot).
backends::IoPlan chunk_part(const ReaderContext& ctx, const PackedChunk& c) {
  backends::IoPlan plan;
  plan.files.push_back({.path = ctx.ranges.files[c.file]});
  backends::FilePlan& part = plan.files.back();
  for (std::size_t r = c.first_read; r < c.first_read + c.read_count; ++r) {
    const ChunkRead& read = ctx.plan.reads[r];
    part.extents.push_back({read.file_offset, read.slot_offset, read.length});
    if (ctx.sizes.empty()) continue;  // buffered: every byte read is needed
    const std::uint64_t size = ctx.sizes[c.file];
    if (read.file_offset + read.needed > size) {
      load_io_error("read (file shorter than planned)", part.path, read.file_offset, EIO);
    }
    if (read.file_offset + read.length > size) part.data_end = size;
  }
  return plan;
}

// One reader thread: takes the next chunk, waits for a free slot, reads the chunk into it through
// its backend (under O_DIRECT whole blocks, the file's end reading short) and hands it to the
// copier. Consecutive chunks it takes of one file are read through one open of it.
void read_chunks(const ReaderContext& ctx, backends::Backend& backend,
                 std::map<std::string, std::uint64_t>& counters) {
  PlanExecutor reader(backend, false, kFileReader);
  try {
    for (std::size_t w = ctx.next.fetch_add(1); w < ctx.plan.chunks.size();
         w = ctx.next.fetch_add(1)) {
      const std::optional<int> slot = ctx.slots.acquire();
      if (!slot) return;
      const backends::MemoryView memory{ctx.pool + static_cast<std::uint64_t>(*slot) * ctx.stride,
                                        ctx.stride, ctx.kind};
      read_part(reader, chunk_part(ctx, ctx.plan.chunks[w]), memory);
      ctx.slots.fill(*slot, w);
    }
    counters = finish_reads(reader);
  } catch (const std::exception& e) {
    ctx.slots.fail(e.what());
  }
}

// Each file's size, for O_DIRECT reads whose last block may reach past it.
std::vector<std::uint64_t> file_sizes(const std::vector<std::string>& files) {
  std::vector<std::uint64_t> sizes;
  for (const std::string& path : files) {
    std::error_code ec;
    sizes.push_back(std::filesystem::file_size(path, ec));
    if (ec) load_io_error("stat", path, 0, ec.value());
  }
  return sizes;
}

// Puts a filled chunk's ranges in place; returns the seconds it took.
double copy_chunk(const ChunkPlan& plan, const PackedChunk& c, const std::byte* slot_memory,
                  Buffer& destination) {
  const auto start = Clock::now();
  for (std::size_t k = c.first_copy; k < c.first_copy + c.copy_count; ++k) {
    const BufferCopy& copy = plan.copies[k];
    destination.copy_from_host(copy.to, {slot_memory + copy.from, copy.length});
  }
  return seconds_since(start);
}

}  // namespace

std::uint64_t slot_bytes(const FileRanges& ranges, const LoadSettings& settings) {
  const std::vector<ByteRange>& r = ranges.ranges;
  std::uint64_t largest = 0, run = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    run = (i > 0 && r[i].file == r[i - 1].file ? run : 0) + r[i].length;
    largest = std::max(largest, run);
  }
  return std::max<std::uint64_t>(
      kLoadBlock,
      std::min(settings.chunk_bytes, (largest + kLoadBlock - 1) / kLoadBlock * kLoadBlock));
}

std::unique_ptr<Buffer> make_chunk_pool(const FileRanges& ranges, const LoadSettings& settings,
                                        MemorySpace& space) {
  const std::uint64_t slot = slot_bytes(ranges, settings);
  const std::uint64_t chunks = pack_chunks(ranges, slot, settings.direct).chunks.size();
  const std::uint64_t stride = slot_stride(slot, settings.direct);
  const std::uint64_t slots =
      std::max<std::uint64_t>(1, std::min(settings.pool_bytes / stride, chunks));
  return space.allocate(slots * stride);
}

void load_pipelined(const FileRanges& ranges, Buffer& destination, const LoadSettings& settings,
                    const Buffer& pool,
                    const std::vector<std::unique_ptr<backends::Backend>>& backends,
                    LoadTiming& timing) {
  const std::uint64_t slot = slot_bytes(ranges, settings);
  const ChunkPlan plan = pack_chunks(ranges, slot, settings.direct);
  const std::uint64_t stride = slot_stride(slot, settings.direct);
  const int slots = static_cast<int>(pool.size() / stride);
  std::byte* const chunks_memory = pool.view().data;
  const std::vector<std::uint64_t> sizes =
      settings.direct ? file_sizes(ranges.files) : std::vector<std::uint64_t>();
  ChunkPool pool_slots(slots);
  std::atomic<std::size_t> next{0};
  const ReaderContext ctx{ranges,           plan, sizes,     chunks_memory, stride,
                          pool.view().kind, next, pool_slots};
  std::vector<std::map<std::string, std::uint64_t>> counters(backends.size());
  std::vector<std::jthread> readers;
  for (std::size_t r = 0; r < backends.size(); ++r)
    readers.emplace_back(read_chunks, std::cref(ctx), std::ref(*backends[r]),
                         std::ref(counters[r]));
  for (std::size_t copied = 0; copied < plan.chunks.size(); ++copied) {
    const std::optional<ChunkPool::Filled> f = pool_slots.take();
    if (!f) break;
    timing.copy_seconds +=
        copy_chunk(plan, plan.chunks[f->payload],
                   chunks_memory + static_cast<std::uint64_t>(f->slot) * stride, destination);
    pool_slots.release(f->slot);
  }
  pool_slots.close();
  readers.clear();  // joins
  for (const auto& mine : counters) {
    for (const auto& [name, count] : mine) timing.counters[name] += count;
  }
  if (const std::string error = pool_slots.error(); !error.empty()) throw std::runtime_error(error);
  timing.pool_chunks = slots;
  timing.reads = plan.reads.size();
}

}  // namespace ckpt::harness
