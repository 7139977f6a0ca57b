#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ckpt::harness {

// Where and how a result was measured: host, kernel, file system type of `target`, git
// revision and build of ckptbench, MPI processes, time (UTC), this process's command line.
nlohmann::json environment_record(const std::filesystem::path& target, const std::string& comm_kind,
                                  int processes);

// This machine's physical memory in bytes; 0 when it cannot be told.
std::uint64_t host_memory_bytes();

// This machine's host name (gethostname).
std::string host_name();

// This process's arguments (/proc/self/cmdline), each shell-quoted, joined by spaces; "" where
// /proc is not mounted.
std::string command_line();

// `word` as a POSIX shell reads it back: unchanged when it holds only safe characters
// (letters, digits, and any of @%+=:,./-_), else in single quotes ('it'\''s').
std::string shell_quote(const std::string& word);

// "ext4", "xfs", "tmpfs", "nfs", "lustre", ... or "unknown (0x...)".
std::string file_system_type(const std::filesystem::path& path);

}  // namespace ckpt::harness
