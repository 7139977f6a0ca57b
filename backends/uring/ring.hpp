#pragma once

#include <liburing.h>

#include <memory>
#include <optional>
#include <string>

namespace ckpt::backends::uring {

// One io_uring instance (submission and completion queues), move-only. The destructor calls
// io_uring_queue_exit, which also drops any registered buffers and files. Callers make sure
// no request is in flight when a Ring is destroyed (TransferQueue::run and run_batch reap every
// request first).
class Ring {
 public:
  // A ring with at least `entries` submission entries (the kernel rounds up to a power of
  // two; the completion queue is twice as large, so `entries` requests in flight never
  // overflow it). `sqpoll`: a kernel thread polls the submission queue (IORING_SETUP_SQPOLL),
  // so submitting needs no system call while the thread is awake.
  // Throws IoError; when io_uring is disabled or absent the message says so and how to enable
  // it (setup_error_message).
  Ring(unsigned entries, bool sqpoll);
  ~Ring() = default;

  Ring(Ring&& other) noexcept = default;
  Ring& operator=(Ring&& other) noexcept = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  io_uring* get() noexcept { return ring_.get(); }
  bool sqpoll() const noexcept { return sqpoll_; }

  // A free submission entry, cleared. When the queue is full (only possible with SQPOLL,
  // while the kernel thread has not consumed earlier entries yet), submits and waits for room.
  // Throws IoError when submitting fails.
  io_uring_sqe* next_sqe();
  // io_uring_submit, retried on EINTR/EAGAIN/EBUSY. Throws IoError.
  void submit();
  // Waits for at least one completion. Throws IoError.
  void wait();

 private:
  struct Exit {
    void operator()(io_uring* ring) const noexcept;
  };
  std::unique_ptr<io_uring, Exit> ring_;
  bool sqpoll_ = false;
};

// The value of /proc/sys/kernel/io_uring_disabled (0 allowed, 1 only for the group
// kernel.io_uring_group and privileged processes, 2 disabled), or nothing when the file is
// absent (kernels before 6.6) or unreadable.
std::optional<int> read_io_uring_disabled();

// The message for io_uring_queue_init failing with `error` (a positive errno), given the
// sysctl value read_io_uring_disabled() returned. EPERM and ENOSYS explain that io_uring is
// disabled or absent, how to enable it (`sysctl -w kernel.io_uring_disabled=0`) and that
// backend "posix" needs no io_uring; other errors name the call, the size and the errno text.
std::string setup_error_message(int error, std::optional<int> disabled_sysctl, unsigned entries,
                                bool sqpoll);

}  // namespace ckpt::backends::uring
