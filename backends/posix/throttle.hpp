#pragma once

// A deliberate, known slowdown for proving regression gates (backend.posix.throttle_percent):
// after each request (pwrite, pread, fsync/fdatasync) sleep `percent` % of the time it took, so
// the transfer and sync phases take (1 + percent/100)× as long as they otherwise would.
#include <chrono>
#include <thread>

namespace ckpt::backends::posix {

class Throttle {
 public:
  explicit Throttle(int percent = 0) : percent_(percent) {}

  bool active() const { return percent_ > 0; }

  // Runs `request` and, when active, then sleeps percent % of its duration. Returns its result.
  template <class Request>
  auto operator()(Request&& request) const {
    if (!active()) return request();
    const auto start = std::chrono::steady_clock::now();
    auto result = request();
    const auto took = std::chrono::steady_clock::now() - start;
    std::this_thread::sleep_for(took * percent_ / 100);
    return result;
  }

 private:
  int percent_;
};

}  // namespace ckpt::backends::posix
