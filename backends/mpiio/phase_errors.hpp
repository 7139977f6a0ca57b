#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "backends/backend.hpp"

namespace ckpt::backends::mpiio {

// The first error of one phase (open, transfer, sync, close) on this process. A phase records
// an error and goes on with its remaining collective calls, so that the other processes of a
// shared file are not left waiting in them; finish() then makes every process of the group fail
// the phase together, so that all of them leave the collective sequence at the same point.
class PhaseErrors {
 public:
  void record(std::string message) {
    if (!first_) first_ = std::move(message);
  }
  // Runs `body`, recording an IoError it throws.
  template <class Body>
  void capture(Body&& body) {
    try {
      std::forward<Body>(body)();
    } catch (const IoError& e) {
      record(e.what());
    }
  }
  bool failed() const { return first_.has_value(); }

  // Collective over `group`. Throws IoError when this process or another one failed: this
  // process's own first error, or which process failed the phase.
  void finish(MPI_Comm group, std::string_view backend, std::string_view phase) const;

 private:
  std::optional<std::string> first_;
};

}  // namespace ckpt::backends::mpiio
