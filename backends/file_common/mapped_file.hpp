#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

// The whole file at `path` mapped read-only (MAP_PRIVATE), for the file-descriptor backends'
// Backend::map_file. An empty file maps to no bytes. Throws IoError naming `backend`, the
// operation and the path.
std::unique_ptr<MappedFile> map_whole_file(std::string_view backend, const std::string& path);

}  // namespace ckpt::backends::file_common
