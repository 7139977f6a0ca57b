#include "harness/common/config_text.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>

#include "harness/common/config_error.hpp"

namespace ckpt::harness {

std::string read_config_file(const std::filesystem::path& path, std::string_view missing,
                             std::string_view unreadable_prefix) {
  const std::string source = path.string();
  const std::string unreadable(unreadable_prefix);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw ConfigError(source, 0, "", std::string(missing));
  }
  if (ec) throw ConfigError(source, 0, "", unreadable + ec.message());
  if (std::filesystem::is_directory(status)) {
    throw ConfigError(source, 0, "", unreadable + "it is a directory, not a file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(source, 0, "",
                      unreadable + std::error_code(errno, std::generic_category()).message());
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw ConfigError(source, 0, "", unreadable + "I/O error while reading");
  return std::move(contents).str();
}

std::string describe_toml_type(toml::node_type type) {
  switch (type) {
    case toml::node_type::none:
      return "nothing";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
  }
  return "an unknown value";
}

}  // namespace ckpt::harness
