#pragma once

// Loading a compressed checkpoint (strategy.compression) as a server would: its load plans are
// planned over the decoded files (decoded_manifest), and no range of a frame can be read on its
// own, so the loader reads the whole frames of every piece a planned range touches (load_files,
// any method) into host scratch, decodes them on load.threads threads, and copies the ranges out
// of the decoded pieces into the destination. All of it is inside the load's time.

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"
#include "harness/load/weight_loader.hpp"
#include "harness/plan/plan_items.hpp"

namespace ckpt::harness {

// Each compressed file of a checkpoint, by its path (the checkpoint's directory / its name, as
// load plans name it): its pieces in decoded order.
struct FramedFiles {
  struct Piece {
    std::uint64_t decoded_offset = 0;  // in the decoded file (decoded_manifest)
    std::uint64_t bytes = 0;           // what its frames decode to
    std::uint64_t stored_offset = 0;   // its frames in the file
    std::uint64_t stored_bytes = 0;
    std::string tensor;  // "name (state, rank R)", for errors
  };
  std::map<std::string, std::vector<Piece>> files;
};

// The frames of compressed checkpoint `dir` whose manifest is `manifest` (empty when it is not
// compressed).
FramedFiles framed_files(const Manifest& manifest, const std::filesystem::path& dir);

// Loads `ranges` (over the decoded files of `framed`) into `destination` as above; the frames'
// scratch comes from `pool_space` (allocated and touched before the clock starts). Throws
// std::runtime_error naming the file, the frames' byte offset and the tensor for a damaged piece
// or a range outside the decoded file, and what load_files throws.
LoadTiming load_framed(const FileRanges& ranges, const FramedFiles& framed, Buffer& destination,
                       const LoadSettings& settings, MemorySpace& pool_space,
                       const LoadStorage& storage);

}  // namespace ckpt::harness
