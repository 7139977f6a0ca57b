#pragma once

#include <cstdint>
#include <string_view>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

// Granule of the per-thread split for buffered I/O: a page, so no two workers share one.
inline constexpr std::uint64_t kPage = 4096;

// Checks shared by the file backends (posix, uring); messages start with `backend`.
// `direct_alignment` must be a power of two from 512 to 1 GiB when `direct` is set.
void validate_direct_alignment(std::string_view backend, const IoSettings& settings);
// File offsets and lengths of every extent, checked before any file is opened.
void check_direct_plan(std::string_view backend, const IoPlan& plan, std::uint64_t alignment);
// Memory addresses of every extent (only with `direct`).
void check_direct_memory(std::string_view backend, const IoPlan& plan, const MemoryView& memory,
                         const IoSettings& settings);

}  // namespace ckpt::backends::file_common
