#include "backends/gds/gds_options.hpp"

#include "backends/gds/gds_declaration.hpp"

namespace ckpt::backends::gds {

GdsOptions parse_options(const BackendOptions& options) {
  const OptionValues values("gds", option_table(), options);
  return GdsOptions{.library = values.text("library"),
                    .register_buffers = values.boolean("register_buffers"),
                    .batch = values.boolean("batch")};
}

}  // namespace ckpt::backends::gds
