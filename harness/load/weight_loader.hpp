#pragma once

// Inference-style weight loading: byte ranges of checkpoint files (whole files for `ckptbench
// load`, the planned ranges of an inference rank's TP slices for `--phase load`) into one buffer of
// any memory space (host, pinned, cuda: the space's copy_from_host moves the bytes), as a server
// loads weights (run_load, LoadPhase), through the storage backend LoadStorage names
// (make_load_backend). Methods:
//   pipelined  `threads` readers, each with its own backend instance (O_DIRECT when `direct`),
//              fill chunks of a bounded pool of `pool_bytes`, while the calling thread copies
//              each filled chunk's ranges to their places in the destination, overlapping the
//              next reads (ServerlessLLM's loader); small ranges of one file share a chunk
//              (pack_chunks);
//   mmap       each file mapped by the backend (Backend::map) and copied out, page faults and
//              all (safetensors' default loader);
//   read       one buffered read of each range into place, file by file; through a collective
//              backend (mpiio), the process's ranges in one Backend::read that every process of
//              LoadStorage::group makes together, as a restore reads.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "harness/exec/codec_plans.hpp"
#include "harness/memory/memory_space.hpp"
#include "harness/plan/plan_items.hpp"
#include "harness/spec/load_settings.hpp"

namespace ckpt::harness {

// The backend the loader reads through (make_load_backend).
struct LoadStorage {
  std::string backend = "posix";     // backend.name, --backend
  backends::BackendOptions options;  // the backend's [backend.<name>] table
  // backend.* settings the loader passes on (queue_depth, sqpoll); it sets one thread a reader,
  // load.direct, no sync and no fallocate itself.
  backends::IoSettings io;
  // The processes that load together: a collective backend's (every process calls load_files).
  backends::ProcessGroup group;
};

struct LoadTiming {
  double seconds = 0;  // from the first open to the last byte in place
  std::uint64_t bytes = 0;
  int pool_chunks = 0;      // pipelined: chunks in the pool
  std::uint64_t reads = 0;  // pread requests issued (pipelined: one per read of a chunk,
                            // file-adjacent ranges share one; mmap: 0)
  double copy_seconds =
      0;  // inside `seconds`: copies into the destination (host -> device for cuda)
  // The backends' counters (an object store's requests by kind), summed over the readers.
  std::map<std::string, std::uint64_t> counters;
  // A compressed checkpoint's pieces decoded inside `seconds` (load_framed); zero otherwise.
  CodecWork decode;
  // A collective backend's notes (its collective rounds, hints in effect), without repeats.
  std::vector<std::string> notes;
};

// Whole files laid out one after another in a destination, each at a multiple of 4096: one range
// a file, in their order.
FileRanges place_files(const std::vector<std::pair<std::string, std::uint64_t>>& paths_and_sizes);
// Bytes a destination for `ranges` needs (the end of the furthest one, rounded up to 4096).
std::uint64_t destination_bytes(const FileRanges& ranges);

// Loads every range into `destination` (destination_bytes(ranges) long) through `storage`'s backend
// (made, one instance a reader, before the clock starts; load_backend_problem has accepted it);
// the chunk pool (and, for read into device memory, its bounce buffer) comes from `pool_space`
// (host, or pinned for device destinations), allocated before the clock starts. Throws
// std::invalid_argument for settings out of range (naming the option) and std::runtime_error
// for an I/O error (backend, operation, path, offset, errno text).
LoadTiming load_files(const FileRanges& ranges, Buffer& destination, const LoadSettings& settings,
                      MemorySpace& pool_space, const LoadStorage& storage = {});

}  // namespace ckpt::harness
