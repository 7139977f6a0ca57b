#pragma once

// The earlier checkpoints a selective checkpoint (strategy.selective_every) points its pieces at,
// and whether they still hold those pieces: a restore of it needs every one of them.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/checkpoint/manifest.hpp"

namespace ckpt::harness {

// The checkpoints `manifest`'s tensors entries name (ManifestTensor::checkpoint), each once,
// oldest (lowest step number) first; empty for a checkpoint that holds every piece itself.
std::vector<std::string> source_checkpoints(const Manifest& manifest);

// Why checkpoint `dir` (its `manifest`) cannot be restored from the earlier checkpoints it points
// at, naming the one it needs: missing, without its manifest (incomplete), with a manifest that
// does not read, that does not hold a piece where `dir`'s manifest says it lies (the same file,
// offset, bytes and checksum), or a file of it that is missing or shorter than its manifest says.
// nullopt when every one holds what is needed. Reads the sibling directories' manifests.
std::optional<std::string> selective_source_problem(const Manifest& manifest,
                                                    const std::filesystem::path& dir);

}  // namespace ckpt::harness
