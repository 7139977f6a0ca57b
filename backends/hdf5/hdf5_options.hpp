#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::hdf5 {

enum class Layout { contiguous, chunked };
// Dataset shapes of a scaled-down checkpoint (model.scale > 1): see hdf5::shrink.
enum class Shapes { scaled, global };

// The values of [backend.hdf5], parsed and checked once at construction against the option
// table (hdf5::option_table()), which holds every default. `hints.*` are MPI info hints,
// handled by mpi::InfoHints.
struct Hdf5Options {
  bool collective = false;     // H5FD_MPIO_COLLECTIVE transfers in shared files
  bool individual_io = false;  // collective_opt = individual_io: H5FD_MPIO_INDIVIDUAL_IO
  Layout layout = Layout::contiguous;
  std::uint64_t alignment = 0;            // H5Pset_alignment; 0: HDF5's default (none)
  std::uint64_t alignment_threshold = 0;  // only objects at least this big are aligned
  bool collective_metadata = false;       // collective metadata reads and writes in shared files
  Shapes shapes = Shapes::scaled;

  // Throws std::invalid_argument naming `backend.hdf5.<key>` for an unknown key or a bad value.
  static Hdf5Options parse(const BackendOptions& options);
};

}  // namespace ckpt::backends::hdf5
