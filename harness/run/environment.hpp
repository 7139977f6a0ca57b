#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace ckpt::harness {

// Where and how a result was measured: host, kernel, file system type of `target`, git
// revision and build of ckptbench, MPI processes, time (UTC).
nlohmann::json environment_record(const std::filesystem::path& target, const std::string& comm_kind, int processes);

// "ext4", "xfs", "tmpfs", "nfs", "lustre", ... or "unknown (0x...)".
std::string file_system_type(const std::filesystem::path& path);

}  // namespace ckpt::harness
