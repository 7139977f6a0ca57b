#pragma once

#include <cstddef>
#include <functional>

#include "backends/uring/ring.hpp"

namespace ckpt::backends::uring {

// Runs `count` one-shot requests (open, fallocate, fsync) through `ring`, keeping up to
// `depth` in flight and submitting once per batch. prep(sqe, i) fills request i (user_data is
// set to i afterwards); done(i, res) receives its result in completion order, which need not
// be submission order, and returns false to stop submitting further requests. Returns once
// every submitted request has completed, so nothing is left in flight. Throws IoError only when
// the ring itself fails (submit, wait); done() records request errors itself.
void run_batch(Ring& ring, std::size_t count, unsigned depth,
               const std::function<void(io_uring_sqe*, std::size_t)>& prep,
               const std::function<bool(std::size_t, int)>& done);

}  // namespace ckpt::backends::uring
