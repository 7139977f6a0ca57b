#include "harness/load/load_storage.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>
#include <vector>

#include "backends/registry.hpp"
#include "harness/load/chunk_packing.hpp"

namespace ckpt::harness {
namespace {

// "backend.name = \"x\"" for campaign keys, "--backend x" for options.
std::string setting(std::string_view name, std::string_view value) {
  if (name.starts_with("--")) return fmt::format("{} {}", name, value);
  return fmt::format("{} = \"{}\"", name, value);
}

// The backends of this build that read raw files back and can serve a load with what `wanted`
// asks by streaming byte ranges.
template <typename Wanted>
std::string able_backends(Wanted wanted) {
  std::vector<std::string> names;
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (b.available && !b.capabilities.collective && b.capabilities.stores_data &&
        b.capabilities.raw_layout && wanted(b.capabilities)) {
      names.push_back(b.name);
    }
  }
  return names.empty() ? "none in this build" : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::optional<std::string> load_backend_problem(std::string_view backend,
                                                const backends::Capabilities& caps,
                                                const LoadSettings& settings,
                                                const LoadSettingNames& names) {
  const std::string method = setting(names.method, load_method_name(settings.method));
  const std::string chosen = setting(names.backend, backend);
  if (caps.collective && settings.method != LoadMethod::read) {
    return fmt::format(
        "{} cannot serve {}: a collective backend reads each process's whole plan in one call "
        "that every process makes together, and {} streams byte ranges file by file; choose {} "
        "(one collective read of each process's ranges), or a backend that streams: {}",
        chosen, method, load_method_name(settings.method), setting(names.method, "read"),
        able_backends([](const backends::Capabilities&) { return true; }));
  }
  if (settings.method == LoadMethod::mmap && !caps.mmap) {
    return fmt::format(
        "{} cannot serve {}: it maps no files (capabilities: mmap = false); choose {} or {}, or a "
        "backend that maps files: {}",
        chosen, method, setting(names.method, "pipelined"), setting(names.method, "read"),
        able_backends([](const backends::Capabilities& c) { return c.mmap; }));
  }
  if (settings.method == LoadMethod::pipelined && settings.direct && !caps.direct_io) {
    return fmt::format(
        "{} cannot serve {} with {}: it has no O_DIRECT (capabilities: direct_io = false); leave "
        "O_DIRECT off, or choose a backend that has it: {}",
        chosen, method,
        names.direct.starts_with("--") ? std::string(names.direct)
                                       : fmt::format("{} = true", names.direct),
        able_backends([](const backends::Capabilities& c) { return c.direct_io; }));
  }
  return std::nullopt;
}

std::unique_ptr<backends::Backend> make_load_backend(const LoadStorage& storage, bool direct) {
  backends::IoSettings io = storage.io;
  io.threads = 1;  // the loader's reader threads are its own (load.threads)
  io.direct = direct;
  io.direct_alignment = kLoadBlock;
  io.sync = backends::SyncPolicy::none;
  io.fallocate = false;
  io.request_latency = false;
  return backends::make_backend(storage.backend, io, storage.options, storage.group);
}

bool loads_together(std::string_view name) {
  for (const backends::BackendInfo& b : backends::list_backends()) {
    if (b.name == name) return b.capabilities.collective;
  }
  return false;
}

}  // namespace ckpt::harness
