#pragma once

#include <cstddef>

namespace ckpt::backends::file_common {

// How many files a backend may hold open at once for one plan: half the soft RLIMIT_NOFILE
// (ckptbench raises the soft limit to the hard one at start), leaving the other half to the
// process's other descriptors (MPI, the results files, other threads' backends), at least 1.
std::size_t open_file_budget();

}  // namespace ckpt::backends::file_common
