#pragma once

// What the hdf5 backend declares about itself (header-only: listed whether or not compiled in).
#include "backends/backend.hpp"

namespace ckpt::backends::hdf5 {

inline OptionTable option_table() {
  return {
      {.name = "collective",
       .type = OptionType::boolean,
       .default_value = "true",
       .help = "shared files: collective transfers (H5FD_MPIO_COLLECTIVE); false: independent"},
      {.name = "collective_opt",
       .type = OptionType::choice,
       .default_value = "collective_io",
       .help =
           "with collective: collective_io (two-phase MPI-IO) or individual_io (each process's own "
           "MPI-IO "
           "inside the collective calls: H5Pset_dxpl_mpio_collective_opt; far faster over OMPIO)",
       .choices = {"collective_io", "individual_io"}},
      {.name = "layout",
       .type = OptionType::choice,
       .default_value = "contiguous",
       .help = "contiguous, or chunked: a chunk is a piece's slice shape, outer dimensions reduced "
               "below 2 GiB",
       .choices = {"contiguous", "chunked"}},
      {.name = "shapes",
       .type = OptionType::choice,
       .default_value = "scaled",
       .help = "with model.scale > 1: scaled, datasets with the leading dimension divided by the "
               "scale where exact "
               "(dense files); global: the global shapes, filled in part (sparse files)",
       .choices = {"scaled", "global"}},
      {.name = "alignment",
       .type = OptionType::size,
       .default_value = "0",
       .help = "H5Pset_alignment: align file objects to this many bytes; 0: HDF5's default (none)"},
      {.name = "alignment_threshold",
       .type = OptionType::size,
       .default_value = "65536",
       .help = "with alignment: only objects of at least this many bytes are aligned (small "
               "metadata is not)"},
      {.name = "collective_metadata",
       .type = OptionType::boolean,
       .default_value = "true",
       .help = "shared files: collective metadata reads and writes (H5Pset_all_coll_metadata_ops, "
               "H5Pset_coll_metadata_write)"},
      {.name = "hints",
       .type = OptionType::string_map,
       .help = "MPI-IO info hints for H5Pset_fapl_mpio (shared files), as mpiio's, e.g. "
               "{ romio_cb_write = \"enable\" }"}};
}

inline Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{
      .shared_file = true,
      .collective = true,
      .raw_layout = false,
      // Set from H5is_library_threadsafe() where hdf5 is compiled in (library_capabilities).
      .background_thread = false,
      .advice = {
          {"background_thread",
           "hdf5 is not compiled into this build, so its library's thread safety is unknown"},
          {"threads", "one HDF5 call at a time per process; run more processes instead"},
          {"queue_depth", "HDF5 I/O is synchronous"},
          {"direct", "HDF5 writes through the page cache; set direct = false"},
          {"fallocate", "HDF5 allocates dataset space itself; set fallocate = false"},
          {"sqpoll", "it needs a submission ring; use the uring backend or sqpoll = false"}}};
}

}  // namespace ckpt::backends::hdf5
