#pragma once

// What the mpiio backend declares about itself (header-only: listed whether or not compiled in).
#include "backends/backend.hpp"

namespace ckpt::backends::mpiio {

inline OptionTable option_table() {
  return {
      {.name = "collective",
       .type = OptionType::boolean,
       .default_value = "false",
       .help = "true: MPI_File_write_at_all / read_at_all per file through an hindexed file view, "
               "in rounds "
               "of at most the largest request (strategy.chunk_bytes); "
               "false: independent MPI_File_write_at / read_at per extent"},
      {.name = "hints",
       .type = OptionType::string_map,
       .help =
           "MPI-IO info hints passed to MPI_File_open, e.g. { romio_cb_write = \"enable\", "
           "cb_buffer_size = \"16777216\", striping_factor = \"8\" }; names and values checked"}};
}

inline Capabilities declared_capabilities(const OptionValues&) {
  return Capabilities{
      .shared_file = true,
      .collective = true,
      .advice = {
          {"direct",
           "MPI-IO has no O_DIRECT; set direct = false (ROMIO's direct_read/direct_write hints ask "
           "the "
           "few file-system drivers that have it)"},
          {"threads", "each process makes one MPI-IO call sequence; run more processes instead"},
          {"queue_depth", "mpiio makes blocking calls"},
          // ROMIO's ADIOI_GEN_Prealloc and Open MPI's OMPIO: without a file-system preallocation
          // call, process 0 rewrites every existing byte and zero-fills up to the size, inside the
          // timed open.
          {"fallocate",
           "MPI_File_preallocate is no reservation in ROMIO's generic driver or Open MPI's OMPIO "
           "(process 0 rewrites the whole file and zero-fills it); set fallocate = false, or use "
           "the "
           "posix backend to measure fallocate"},
          {"sqpoll", "it needs a submission ring; use the uring backend or sqpoll = false"}}};
}

}  // namespace ckpt::backends::mpiio
