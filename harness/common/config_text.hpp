#pragma once

#include <toml++/toml.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace ckpt::harness {

// The whole text of a configuration file. Throws ConfigError naming the path with
// `missing` when it does not exist, or `unreadable` + the reason (a directory, permissions,
// an I/O error).
std::string read_config_file(const std::filesystem::path& path, std::string_view missing,
                             std::string_view unreadable);

// "a string", "an integer", "a table", ... for "expected X, found Y" messages.
std::string describe_toml_type(toml::node_type type);

}  // namespace ckpt::harness
