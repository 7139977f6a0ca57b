#include "backends/hdf5/hdf5_options.hpp"

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
      if (value == "contiguous") {
        parsed.layout = Layout::contiguous;
      } else if (value == "chunked") {
        parsed.layout = Layout::chunked;
      } else {
        bad_value(key, value, "contiguous or chunked");
      }
    } else if (key == "collective_opt") {
      if (value == "collective_io") {
        parsed.individual_io = false;
      } else if (value == "individual_io") {
        parsed.individual_io = true;
      } else {
        bad_value(key, value, "collective_io or individual_io");
      }
    } else if (key == "shapes") {
      if (value == "scaled") {
        parsed.shapes = Shapes::scaled;
      } else if (value == "global") {
        parsed.shapes = Shapes::global;
      } else {
        bad_value(key, value, "scaled or global");
      }
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
