#include "harness/cli/version.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <CLI/Version.hpp>
#include <nlohmann/json.hpp>

#include "backends/registry.hpp"
#include "harness/comm/comm.hpp"
#include "harness/memory/memory_spaces.hpp"

// CKPT_GIT_REVISION and CKPT_BUILD_TYPE are compile definitions of ckpt_cli, CKPT_VERSION
// (and the library versions) of this file.

namespace ckpt::harness {
namespace {

std::string availability(const std::optional<std::string>& why_not) {
  return why_not ? "no: " + *why_not : "yes";
}

std::string libraries() {
  std::string list =
      fmt::format("CLI11 {}, fmt {}.{}.{}, nlohmann-json {}.{}.{}, toml++ {}.{}.{}", CLI11_VERSION,
                  FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100,
                  NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR,
                  NLOHMANN_JSON_VERSION_PATCH, TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH);
  const std::string mpi = mpi_library_version();
  list += ", MPI " + (mpi.empty() ? std::string("none (built without MPI)") : mpi);
#ifdef CKPT_LIBURING_VERSION
  list += ", liburing " CKPT_LIBURING_VERSION;
#endif
#ifdef CKPT_HDF5_VERSION
  list += ", HDF5 " CKPT_HDF5_VERSION;
#endif
  const std::string cuda = memory_build_cuda();
  if (cuda != "off") list += ", CUDA " + cuda;
  const std::string kokkos = memory_build_kokkos();
  if (kokkos != "off") list += ", Kokkos " + kokkos;
  return list;
}

}  // namespace

std::string version_text() {
  std::string text = fmt::format("ckptbench {} (git {}, {} build)\n", CKPT_VERSION,
                                 CKPT_GIT_REVISION, CKPT_BUILD_TYPE);
  text += "backends:\n";
  for (const backends::BackendInfo& b : backends::list_backends()) {
    text += fmt::format(
        "  {:<8} {}\n", b.name,
        availability(b.available ? std::nullopt
                                 : std::optional(b.reason + " (" + b.cmake_option + ")")));
  }
  text += "memory spaces:\n";
  const MemorySpaces spaces;
  for (const MemorySpaceKind kind : {MemorySpaceKind::host, MemorySpaceKind::pinned,
                                     MemorySpaceKind::cuda, MemorySpaceKind::kokkos}) {
    std::string line = availability(spaces.unavailable(kind));
    if (kind == MemorySpaceKind::pinned && spaces.unavailable(MemorySpaceKind::cuda)) {
      line += " (mlock'ed host memory without a usable CUDA device)";
    }
    text += fmt::format("  {:<8} {}\n", memory_space_name(kind), line);
  }
  text += "libraries: " + libraries();
  return text;
}

}  // namespace ckpt::harness
