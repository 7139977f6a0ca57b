#include "harness/run/signal_guard.hpp"

namespace ckpt::harness {
namespace {

// Signal handlers can reach only static storage; this is the one flag they set.
std::atomic<bool>& interrupted() {
  static std::atomic<bool> flag{false};
  return flag;
}

extern "C" void on_signal(int signal_number) {
  interrupted().store(true);
  std::signal(signal_number, SIG_DFL);  // a second signal ends the process
}

}  // namespace

SignalGuard::SignalGuard() {
  interrupted().store(false);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

SignalGuard::~SignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

const std::atomic<bool>& SignalGuard::flag() const {
  return interrupted();
}

}  // namespace ckpt::harness
