#pragma once

#include <filesystem>
#include <optional>

namespace ckpt::harness {

// Whether `dir` is a directory this process may create entries in.
bool writable_directory(const std::filesystem::path& dir);

// Where making directory `dir` would fail: `dir` itself, or its nearest existing ancestor, when
// that is not a writable directory; nullopt when `dir` is a writable directory or can be made.
std::optional<std::filesystem::path> uncreatable_directory(const std::filesystem::path& dir);

}  // namespace ckpt::harness
