#include "backends/gds/gds_options.hpp"

#include <stdexcept>

namespace ckpt::backends::gds {
namespace {

bool parse_bool(const std::string& key, const std::string& value) {
  if (value == "true") return true;
  if (value == "false") return false;
  throw std::invalid_argument("gds: `backend.gds." + key + "` must be true or false (got \"" +
                              value + "\")");
}

}  // namespace

GdsOptions parse_options(const BackendOptions& options) {
  GdsOptions parsed;
  for (const auto& [key, value] : options) {
    if (key == "library") {
      if (value.empty())
        throw std::invalid_argument("gds: `backend.gds.library` is empty; name libcufile's path");
      parsed.library = value;
    } else if (key == "register_buffers") {
      parsed.register_buffers = parse_bool(key, value);
    } else if (key == "batch") {
      parsed.batch = parse_bool(key, value);
    } else {
      throw std::invalid_argument("gds: unknown option `backend.gds." + key +
                                  "` (options: library register_buffers batch)");
    }
  }
  return parsed;
}

}  // namespace ckpt::backends::gds
