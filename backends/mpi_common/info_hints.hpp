#pragma once

#include <mpi.h>

#include <map>
#include <string>
#include <string_view>

#include "backends/backend.hpp"

namespace ckpt::backends::mpi {

// The MPI-IO hints among a backend's options: every "hints.<key>" option, as key -> value
// ("hints.romio_cb_write" = "enable" gives romio_cb_write -> enable). Other options are ignored.
// Needs no MPI. Throws std::invalid_argument naming `backend.<backend>.hints.<key>`:
//  - for a hint not in known_hints(), with the closest known name ("did you mean") and the list
//    of known hints;
//  - for a bad value: enable/disable/automatic for romio_* toggles, true/false for booleans,
//    decimal integers in [1, INT_MAX] for sizes and counts, non-empty text otherwise.
std::map<std::string, std::string> validated_hints(std::string_view backend,
                                                   const BackendOptions& options);

// What validated_hints() would refuse, or "" (for checks that must not throw: --dry-run).
std::string hints_problem(std::string_view backend, const BackendOptions& options);

// An MPI_Info holding validated_hints(backend, options), or MPI_INFO_NULL when there are none.
// Move-only; the destructor frees the info object.
class InfoHints {
 public:
  // Throws std::invalid_argument as validated_hints() does, and when hints are given but MPI is
  // not initialised.
  InfoHints(std::string_view backend, const BackendOptions& options);
  ~InfoHints();
  InfoHints(InfoHints&& other) noexcept;
  InfoHints& operator=(InfoHints&& other) noexcept;
  InfoHints(const InfoHints&) = delete;
  InfoHints& operator=(const InfoHints&) = delete;

  MPI_Info get() const { return info_; }
  // The hints as given (key without the "hints." prefix -> value).
  const std::map<std::string, std::string>& hints() const { return hints_; }

 private:
  void release() noexcept;

  std::map<std::string, std::string> hints_;
  MPI_Info info_ = MPI_INFO_NULL;
};

}  // namespace ckpt::backends::mpi
