#pragma once

// Device staging: a backend that cannot address device memory (Capabilities::device_memory
// false) gets the device buffer's bytes through pinned host chunks. Checkpoint: device ->
// pinned copies, double-buffered (or more), each chunk written while the next is copied;
// restore: reads into a chunk while the previous one is copied to the device. Collective
// backends take the whole plan in one call: the whole buffer is staged first (no overlap).

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "harness/memory/memory_space.hpp"

namespace ckpt::harness {

struct StagingSettings {
  std::uint64_t chunk_bytes = std::uint64_t{64} << 20;  // memory.staging_bytes
  int buffers = 2;                                      // memory.staging_buffers
};

// What one chunk carries: buffer bytes [offset, offset + bytes) of the plan's memory, and the
// extents and dataset pieces in that range, memory offsets relative to the chunk. Sparse: only
// the files the chunk touches, by their index in the plan (a plan may have thousands of files
// and a checkpoint hundreds of chunks).
struct StagedPart {
  struct File {
    std::size_t index = 0;  // in the plan's files
    std::vector<backends::Extent> extents;
    std::vector<backends::DatasetPiece> datasets;
  };
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::vector<File> files;  // in plan order
};

// Cuts `plan` into chunks of at most `chunk_bytes` of memory, in memory order, skipping ranges
// no extent touches. A chunk boundary inside a dataset piece falls on an element boundary.
std::vector<StagedPart> split_plan(const backends::IoPlan& plan, std::uint64_t chunk_bytes);

// The part as the Backend::Stream takes it: the plan's files in the plan's order, each with the
// part's extents and dataset pieces (none for the files it does not touch).
backends::IoPlan part_plan(const backends::IoPlan& plan, const StagedPart& part);

// The plan's files (paths, sizes, reservations, sharing) without extents or dataset pieces.
backends::IoPlan without_ranges(const backends::IoPlan& plan);

// One plan streamed part by part through Backend::begin, its files opened once: the one streamed
// transfer. The Stager's pipeline and the engines' ring flush run it, and so do the executor's
// calls that keep their files open (the loader's read strategies). Each StagedPart's extents and
// dataset pieces go through one scratch copy of the plan's files, so a part costs its own extents,
// not the plan's file count. Used by one thread.
class PartStream {
 public:
  // Copies the plan's files (before any clock starts); `plan` must outlive the stream.
  explicit PartStream(const backends::IoPlan& plan);
  // Opens the stream: Backend::begin(plan, write), throwing what it throws.
  void begin(backends::Backend& backend, bool write);
  bool started() const { return stream_ != nullptr; }
  // Whether every transfer so far succeeded. Precondition: started().
  bool ok() const { return stream_->ok(); }
  // Moves `part` (one of split_plan(plan)) between the backend and `memory`, which holds the
  // part's bytes from its offset 0. Precondition: started().
  void transfer(const StagedPart& part, backends::MemoryView memory);
  // Moves `part`: the plan's files in the plan's order, each with some of its extents, memory
  // offsets relative to `memory` (Backend::Stream::transfer). Precondition: started().
  void transfer(const backends::IoPlan& part, backends::MemoryView memory);
  // Syncs and closes as Stream::finish does. Precondition: started().
  backends::IoOutcome finish();

 private:
  const backends::IoPlan& plan_;
  backends::IoPlan scratch_;  // the plan's files, without extents or dataset pieces
  std::unique_ptr<backends::Backend::Stream> stream_;
};

struct StagedOutcome {
  backends::IoOutcome io;   // the backend's phases: open, the chunks' transfers summed, sync, close
  double copy_seconds = 0;  // device -> host (write) or host -> device (read), summed over chunks
  double seconds = 0;       // the whole pipeline, wall-clock: what the checkpoint or restore took
  std::uint64_t chunks = 0;
};

// Moves plans between a device buffer and a backend through the copier's pinned slots, which
// are allocated once (before any clock starts) and reused by every write and read.
class Stager {
 public:
  // whole: one slot holds a plan's whole memory, for collective backends.
  Stager(std::unique_ptr<DeviceCopier> copier, bool whole);

  // `plan`'s memory offsets count from buffer byte `base` (a rank's place in the process
  // buffer). A copy failure (CUDA error) becomes the outcome's error.
  StagedOutcome write(backends::Backend& backend, const backends::IoPlan& plan, std::uint64_t base);
  StagedOutcome read(backends::Backend& backend, const backends::IoPlan& plan, std::uint64_t base);

 private:
  StagedOutcome pipelined(backends::Backend& backend, const backends::IoPlan& plan,
                          std::uint64_t base, bool write);
  StagedOutcome whole(backends::Backend& backend, const backends::IoPlan& plan, std::uint64_t base,
                      bool write);
  void drain(StagedOutcome& out);

  std::unique_ptr<DeviceCopier> copier_;
  bool whole_;
};

// A Stager for `buffer` (a device buffer): `settings.buffers` slots of settings.chunk_bytes, or
// with `whole`, one slot of the buffer's size. Throws std::invalid_argument for a buffer the
// host addresses (nothing to stage) and std::runtime_error when pinned memory runs out.
Stager make_stager(const Buffer& buffer, const StagingSettings& settings, bool whole);

}  // namespace ckpt::harness
