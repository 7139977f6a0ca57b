#pragma once

#include <cstddef>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

// How many files a backend may hold open at once for one plan: half the soft RLIMIT_NOFILE
// (ckptbench raises the soft limit to the hard one at start), leaving the other half to the
// process's other descriptors (MPI, the results files, other threads' backends), at least 1.
std::size_t open_file_budget();

// The indices of `plan`'s files that move bytes, in order, in groups of at most `batch`: the
// files a batched backend opens, transfers and closes together.
std::vector<std::vector<std::size_t>> busy_file_batches(const IoPlan& plan, std::size_t batch);

}  // namespace ckpt::backends::file_common
