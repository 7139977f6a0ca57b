#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::harness {

// Turns one extent per shard (in file order, memory mirroring the file) into the extents a
// backend submits: consecutive extents merged while the merged extent, gaps included, stays
// within `coalesce_bytes` (0: no merging); then every extent split into pieces of at most
// `chunk_bytes` (0: no splitting), rounded down to a multiple of `granule` (direct I/O).
std::vector<backends::Extent> build_extents(std::vector<backends::Extent> shards,
                                            std::uint64_t coalesce_bytes, std::uint64_t chunk_bytes,
                                            std::uint64_t granule);

// The files of a checkpoint that holds part of a state (selective and delta checkpoints): runs of
// the buffer packed back to back in each file, in the order they are added.
class PackedFiles {
 public:
  explicit PackedFiles(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // Appends `bytes` of the buffer at `memory_offset` to `file` (relative to the directory);
  // returns the run's offset in the file.
  std::uint64_t add(const std::string& file, std::uint64_t memory_offset, std::uint64_t bytes);
  // The files in first-use order (paths under the directory), their runs merged and split as
  // build_extents does with `coalesce_bytes` and `chunk_bytes`.
  std::vector<backends::FilePlan> files(std::uint64_t coalesce_bytes,
                                        std::uint64_t chunk_bytes) const;

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::size_t> index_;  // relative path -> index in files_
  std::vector<backends::FilePlan> files_;     // paths and sizes
  std::vector<std::vector<backends::Extent>> extents_;
};

}  // namespace ckpt::harness
