#include "backends/hdf5/hdf5_options.hpp"

#include "backends/hdf5/hdf5_declaration.hpp"

namespace ckpt::backends::hdf5 {

Hdf5Options Hdf5Options::parse(const BackendOptions& options) {
  const OptionValues values("hdf5", option_table(), options);
  return Hdf5Options{
      .collective = values.boolean("collective"),
      .individual_io = values.text("collective_opt") == "individual_io",
      .layout = values.text("layout") == "chunked" ? Layout::chunked : Layout::contiguous,
      .alignment = static_cast<std::uint64_t>(values.integer("alignment")),
      .alignment_threshold = static_cast<std::uint64_t>(values.integer("alignment_threshold")),
      .collective_metadata = values.boolean("collective_metadata"),
      .shapes = values.text("shapes") == "global" ? Shapes::global : Shapes::scaled};
}

}  // namespace ckpt::backends::hdf5
