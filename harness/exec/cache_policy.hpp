#pragma once

#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// Evicts the files of `plans` from the page cache before a restore, per the case's policy:
// drop writes 3 to /proc/sys/vm/drop_caches (root), falling back to fadvise when refused;
// fadvise calls posix_fadvise(DONTNEED) on every file (after fdatasync, so dirty pages go).
// read_shift needs no eviction here (the reader reads another rank's files) and is combined
// with fadvise of its own files. Returns what was actually done, for the result record.
std::string apply_cache_policy(CachePolicy policy, const std::vector<backends::IoPlan>& plans);

}  // namespace ckpt::harness
