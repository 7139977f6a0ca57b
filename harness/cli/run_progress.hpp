#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/run/run_context.hpp"
#include "harness/spec/case.hpp"

namespace ckpt::harness {

// -q: errors and the result table only; -v: also each iteration's times.
enum class Verbosity { quiet, normal, verbose };

// The progress lines of a run (process 0, on stderr): one when a case starts, one per iteration
// with its rates and the estimated time left in the case and in the campaign, and with -v each
// iteration's times. The estimates come from the elapsed time of the iterations and cases done.
class RunProgress {
 public:
  RunProgress(std::ostream& out, Verbosity verbosity, std::size_t cases);
  void case_started(const Case& c);
  void iteration_done(const Case& c, const IterationReport& report);
  void case_done();

 private:
  using Clock = std::chrono::steady_clock;
  // The mean wall time of the cases done, and of the current one as projected when given.
  double mean_case_seconds(std::optional<double> current_projection) const;
  std::string position(const Case& c) const;

  std::ostream& out_;
  Verbosity verbosity_;
  std::size_t cases_;
  std::size_t started_ = 0;
  Clock::time_point case_start_;
  std::vector<double> case_seconds_;  // wall time of each case done, setup included
};

// 0.4 -> "0.4 s", 42 -> "42 s", 100 -> "1 min 40 s", 7500 -> "2 h 5 min".
std::string format_duration(double seconds);

}  // namespace ckpt::harness
