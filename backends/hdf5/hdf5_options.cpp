#include "backends/hdf5/hdf5_options.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <string>

namespace ckpt::backends::hdf5 {
namespace {

[[noreturn]] void bad_value(const std::string& key, const std::string& value,
                            std::string_view expected) {
  throw std::invalid_argument("hdf5: `backend.hdf5." + key + "` = \"" + value + "\": expected " +
                              std::string(expected));
}

bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  bad_value(key, value, "true or false");
}

// The index of `value` among two `choices`.
std::size_t parse_choice(const std::string& key, const std::string& value,
                         const std::array<std::string_view, 2>& choices) {
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (value == choices[i]) return i;
  }
  bad_value(key, value, std::string(choices[0]) + " or " + std::string(choices[1]));
}

std::uint64_t parse_bytes(const std::string& key, const std::string& value) {
  std::uint64_t result = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, error] = std::from_chars(value.data(), end, result);
  if (value.empty() || error != std::errc() || ptr != end) {
    bad_value(key, value, "a byte count (a non-negative integer such as 1048576)");
  }
  return result;
}

}  // namespace

Hdf5Options Hdf5Options::parse(const BackendOptions& options) {
  Hdf5Options parsed;
  for (const auto& [key, value] : options) {
    if (key == "collective") {
      parsed.collective = parse_bool(key, value);
    } else if (key == "collective_metadata") {
      parsed.collective_metadata = parse_bool(key, value);
    } else if (key == "layout") {
      parsed.layout = parse_choice(key, value, {"contiguous", "chunked"}) == 0 ? Layout::contiguous : Layout::chunked;
    } else if (key == "collective_opt") {
      parsed.individual_io = parse_choice(key, value, {"collective_io", "individual_io"}) == 1;
    } else if (key == "shapes") {
      parsed.shapes = parse_choice(key, value, {"scaled", "global"}) == 0 ? Shapes::scaled : Shapes::global;
    } else if (key == "alignment") {
      parsed.alignment = parse_bytes(key, value);
    } else if (key == "alignment_threshold") {
      parsed.alignment_threshold = parse_bytes(key, value);
    } else if (!key.starts_with("hints.")) {
      throw std::invalid_argument("hdf5: unknown option `backend.hdf5." + key + "`");
    }
  }
  return parsed;
}

}  // namespace ckpt::backends::hdf5
