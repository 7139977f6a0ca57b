#pragma once

#include <atomic>
#include <csignal>

namespace ckpt::harness {

// While alive, SIGINT and SIGTERM set flag() instead of killing the process, so a run stops
// at the next iteration boundary and keeps its results. A second signal kills as usual.
class SignalGuard {
 public:
  SignalGuard();
  ~SignalGuard();
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  const std::atomic<bool>& flag() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace ckpt::harness
