#include "harness/comm/mpi_io_choice.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#if CKPT_HAVE_MPI
#include <mpi.h>
#endif

namespace ckpt::harness {
namespace {

constexpr std::string_view kSelectionVariable = "OMPI_MCA_io";

bool built_with_open_mpi() {
#if defined(OPEN_MPI)
  return true;
#else
  return false;
#endif
}

// Whether Open MPI's io selection `value` (a component list, or ^ and components to exclude)
// picks what `choice` asks for.
bool selection_agrees(const std::string& value, MpiIoChoice choice) {
  const bool excludes = value.starts_with("^");
  const bool names_ompio = value.find("ompio") != std::string::npos;
  const bool names_romio = value.find("romio") != std::string::npos;
  if (choice == MpiIoChoice::romio)
    return excludes ? names_ompio && !names_romio : names_romio && !names_ompio;
  return excludes ? names_romio && !names_ompio : names_ompio && !names_romio;
}

}  // namespace

std::optional<MpiIoChoice> mpi_io_choice_named(std::string_view name) {
  for (const MpiIoChoice choice :
       {MpiIoChoice::library_default, MpiIoChoice::romio, MpiIoChoice::ompio}) {
    if (mpi_io_choice_name(choice) == name) return choice;
  }
  return std::nullopt;
}

std::string_view mpi_io_choice_name(MpiIoChoice choice) {
  switch (choice) {
    case MpiIoChoice::library_default:
      return "default";
    case MpiIoChoice::romio:
      return "romio";
    case MpiIoChoice::ompio:
      return "ompio";
  }
  return "default";
}

std::optional<std::string> request_mpi_io(MpiIoChoice choice) {
  if (choice == MpiIoChoice::library_default) return std::nullopt;
  const std::string name(mpi_io_choice_name(choice));
  if (!built_with_open_mpi()) {
    if (choice == MpiIoChoice::romio)
      return std::nullopt;  // MPICH and its kin: ROMIO is all there is
    return "campaign.mpi_io = \"ompio\" needs Open MPI, and this ckptbench was built with another "
           "MPI (whose "
           "MPI-IO is ROMIO); set campaign.mpi_io = \"default\" or \"romio\"";
  }
  const std::string variable(kSelectionVariable);
  if (const char* set = std::getenv(variable.c_str()); set != nullptr) {
    if (selection_agrees(set, choice)) return std::nullopt;
    return "campaign.mpi_io = \"" + name + "\" but the environment selects " + variable + "=" +
           set + " (mpirun --mca io " + set + "); drop one of them, or make them agree";
  }
  ::setenv(variable.c_str(), choice == MpiIoChoice::romio ? "^ompio" : "ompio", 1);
  return std::nullopt;
}

std::vector<std::string> loaded_mpi_io_modules() {
  std::set<std::string> modules;
  std::ifstream maps("/proc/self/maps");
  constexpr std::string_view prefix = "/mca_io_";
  for (std::string line; std::getline(maps, line);) {
    const std::size_t at = line.rfind(prefix);
    if (at == std::string::npos || !line.ends_with(".so")) continue;
    modules.insert(line.substr(at + prefix.size(), line.size() - at - prefix.size() - 3));
  }
  return {modules.begin(), modules.end()};
}

}  // namespace ckpt::harness
