#pragma once

// Where the weight loader's bytes come from: a backend of the registry (backends::make_backend), so
// that `--phase load` and `ckptbench load` measure whatever storage backend.name (--backend) names.
// The load methods are read strategies over the one contract: pipelined and read move their byte
// ranges through the one executor (PlanExecutor), each file kept open across the parts read from
// it (Opening::kept_open); mmap maps each file through Backend::map, which file backends declare
// (Capabilities::mmap).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/backend.hpp"
#include "harness/load/weight_loader.hpp"

namespace ckpt::harness {

// How the problem names its settings: the campaign's keys, or `ckptbench load`'s options.
struct LoadSettingNames {
  std::string_view backend = "backend.name";
  std::string_view method = "load.method";
  std::string_view direct = "load.direct";
};
inline constexpr LoadSettingNames kLoadCommandNames{"--backend", "--method", "--direct"};

// Why a backend with `capabilities` cannot serve `settings` (collective: the read method only, one
// call with the process's whole plan; mmap without Capabilities::mmap; load.direct without
// direct_io), naming both settings and the backends that can, or nullopt. A backend of its own
// file format (hdf5) reads the dataset pieces the load planner makes of a checkpoint it wrote.
std::optional<std::string> load_backend_problem(std::string_view backend,
                                                const backends::Capabilities& capabilities,
                                                const LoadSettings& settings,
                                                const LoadSettingNames& names = {});

// One backend instance for one reader (a collective backend's for `storage.group`, made by every
// process of it together). Throws std::invalid_argument as backends::make_backend does.
std::unique_ptr<backends::Backend> make_load_backend(const LoadStorage& storage, bool direct);

// Whether backend `name` is collective: every process of the group loads together, even one with
// nothing to load.
bool loads_together(std::string_view name);

}  // namespace ckpt::harness
