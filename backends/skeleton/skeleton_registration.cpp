// The skeleton backend's registration: everything the registry, the campaign keys, `ckptbench
// backends` and the README tables know about it comes from here. Copy this folder to add a
// backend (see backends/README.md).
#include "backends/registration.hpp"

#if CKPT_HAVE_BACKEND_SKELETON
#include "backends/skeleton/skeleton_backend.hpp"
#endif

namespace ckpt::backends::skeleton {

OptionTable option_table() {
  return {
      {.name = "block_bytes",
       .type = OptionType::size,
       .default_value = "1048576",
       .help =
           "largest single pwrite/pread: each extent moves in blocks of at most this many bytes",
       .min = 4096,
       .max = std::int64_t{1} << 30}};
}

Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{
      .shared_file = true,
      .mmap = true,
      .advice = {{"threads", "the skeleton moves extents one at a time; use posix for threads"}}};
}

BackendRegistration registration() {
  BackendRegistration r{
      .name = "skeleton",
      .description = "the template for new backends: pwrite/pread in blocks of block_bytes",
      .options = option_table(),
      .capabilities = &declared_capabilities};
#if CKPT_HAVE_BACKEND_SKELETON
  r.make = [](const IoSettings& settings, const BackendOptions& options,
              const ProcessGroup&) -> std::unique_ptr<Backend> {
    const OptionValues values("skeleton", option_table(), options);
    return std::make_unique<SkeletonBackend>(
        settings, static_cast<std::uint64_t>(values.integer("block_bytes")));
  };
#endif
  return r;
}

}  // namespace ckpt::backends::skeleton
