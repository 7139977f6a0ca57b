#pragma once

// The pieces of load_files: the loader's I/O errors, its reads through the executor, and the
// pipelined loader's reader threads and chunk pool.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "harness/exec/execute_plans.hpp"
#include "harness/load/weight_loader.hpp"

namespace ckpt::harness {

// Throws std::runtime_error: "load: <operation> <path> at offset <offset>: <errno text>".
[[noreturn]] void load_io_error(std::string_view operation, const std::string& path,
                                std::uint64_t offset, int error);

// A reader's executor options: each file kept open across the parts read from it.
inline constexpr ExecutorOptions kFileReader{.opening = Opening::kept_open};
// Reads `part` through `reader` (made with kFileReader) into `memory`; throws std::runtime_error
// with the error of the call ("load: <backend>: <operation> <path> at offset ...").
void read_part(PlanExecutor& reader, const backends::IoPlan& part, backends::MemoryView memory);
// Closes the reader's last file; returns the backend's counters summed over its calls. Throws as
// read_part does.
std::map<std::string, std::uint64_t> finish_reads(PlanExecutor& reader);

// Bytes of one chunk: chunk_bytes, or when smaller the bytes of the largest run of consecutive
// ranges of one file (a whole file for `ckptbench load`), rounded up to 4096.
std::uint64_t slot_bytes(const FileRanges& ranges, const LoadSettings& settings);
// The pipelined method's pool (pre-touched, so made before the clock starts) from `space`: as many
// chunks as pool_bytes holds and the files need.
std::unique_ptr<Buffer> make_chunk_pool(const FileRanges& ranges, const LoadSettings& settings,
                                        MemorySpace& space);
// The pipelined method (settings checked by the caller) through `pool` (host-addressable), its
// ranges packed into chunks (pack_chunks), one reader thread a backend of `backends` (made with
// load.direct); sets timing's pool_chunks and reads and adds the time of the copies into
// `destination` to its copy_seconds.
void load_pipelined(const FileRanges& ranges, Buffer& destination, const LoadSettings& settings,
                    const Buffer& pool,
                    const std::vector<std::unique_ptr<backends::Backend>>& backends,
                    LoadTiming& timing);

}  // namespace ckpt::harness
