#include "backends/uring/ring.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "backends/backend.hpp"

namespace ckpt::backends::uring {
namespace {

// How long an idle SQPOLL thread spins before it sleeps and needs a wake-up on submission.
constexpr unsigned kSqThreadIdleMs = 50;

bool retryable(int error) {
  return error == EINTR || error == EAGAIN || error == EBUSY;
}

}  // namespace

void Ring::Exit::operator()(io_uring* ring) const noexcept {
  io_uring_queue_exit(ring);
  delete ring;
}

Ring::Ring(unsigned entries, bool sqpoll) : sqpoll_(sqpoll) {
  auto ring = std::make_unique<io_uring>();
  io_uring_params params{};
  if (sqpoll) {
    params.flags |= IORING_SETUP_SQPOLL;
    params.sq_thread_idle = kSqThreadIdleMs;
  }
  const int result = io_uring_queue_init_params(entries, ring.get(), &params);
  if (result < 0) {
    throw IoError(setup_error_message(-result, read_io_uring_disabled(), entries, sqpoll));
  }
  ring_.reset(ring.release());
}

io_uring_sqe* Ring::next_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  while (sqe == nullptr) {
    submit();
    if (sqpoll_) io_uring_sqring_wait(ring_.get());
    sqe = io_uring_get_sqe(ring_.get());
  }
  return sqe;
}

void Ring::submit() {
  int result = 0;
  do {
    result = io_uring_submit(ring_.get());
  } while (result < 0 && retryable(-result));
  if (result < 0) throw IoError("uring", "io_uring_submit", "(ring)", -result);
}

void Ring::wait() {
  io_uring_cqe* cqe = nullptr;
  int result = 0;
  do {
    result = io_uring_wait_cqe(ring_.get(), &cqe);
  } while (result < 0 && retryable(-result));
  if (result < 0) throw IoError("uring", "io_uring_wait_cqe", "(ring)", -result);
}

std::optional<int> read_io_uring_disabled() {
  std::ifstream in("/proc/sys/kernel/io_uring_disabled");
  int value = 0;
  if (in >> value) return value;
  return std::nullopt;
}

std::string setup_error_message(int error, std::optional<int> disabled_sysctl, unsigned entries,
                                bool sqpoll) {
  const std::string call = "uring: io_uring_setup (" + std::to_string(entries) + " entries" +
                           (sqpoll ? ", SQPOLL" : "") + "): " + std::strerror(error);
  const std::string remedy =
      "enable it with `sysctl -w kernel.io_uring_disabled=0` (as root), or use backend "
      "\"posix\", which needs no io_uring";
  if (error == ENOSYS) {
    return call +
           " — this kernel has no io_uring (CONFIG_IO_URING is off); use backend "
           "\"posix\", which needs no io_uring";
  }
  if (error == EPERM && disabled_sysctl == 2) {
    return call + " — io_uring is disabled on this system (kernel.io_uring_disabled = 2); " +
           remedy;
  }
  if (error == EPERM && disabled_sysctl == 1) {
    return call +
           " — io_uring is restricted to privileged processes and the group "
           "kernel.io_uring_group (kernel.io_uring_disabled = 1); join that group, " +
           remedy;
  }
  if (error == EPERM) {
    return call +
           " — io_uring is disabled here (kernel.io_uring_disabled, a seccomp filter "
           "or a container policy); " +
           remedy;
  }
  return call;
}

}  // namespace ckpt::backends::uring
