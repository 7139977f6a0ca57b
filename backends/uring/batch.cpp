#include "backends/uring/batch.hpp"

#include <array>

namespace ckpt::backends::uring {

void run_batch(Ring& ring, std::size_t count, unsigned depth,
               const std::function<void(io_uring_sqe*, std::size_t)>& prep,
               const std::function<bool(std::size_t, int)>& done) {
  std::size_t next = 0;
  std::size_t in_flight = 0;
  bool stopped = false;
  std::array<io_uring_cqe*, 64> cqes{};
  while (true) {
    std::size_t prepared = 0;
    while (!stopped && next < count && in_flight + prepared < depth) {
      io_uring_sqe* sqe = ring.next_sqe();
      prep(sqe, next);
      io_uring_sqe_set_data64(sqe, next);
      ++next;
      ++prepared;
    }
    if (prepared > 0) ring.submit();
    in_flight += prepared;
    if (in_flight == 0) return;
    ring.wait();
    const unsigned ready =
        io_uring_peek_batch_cqe(ring.get(), cqes.data(), static_cast<unsigned>(cqes.size()));
    for (unsigned c = 0; c < ready; ++c) {
      if (!done(static_cast<std::size_t>(cqes[c]->user_data), cqes[c]->res)) stopped = true;
    }
    io_uring_cq_advance(ring.get(), ready);
    in_flight -= ready;
  }
}

}  // namespace ckpt::backends::uring
