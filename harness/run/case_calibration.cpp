// measure.calibration inside a case: a Calibration of the case's bytes, one sample before each
// iteration (so calibration and case alternate and see the same noise), recorded per timed one.
#include <fmt/format.h>

#include <chrono>

#include "harness/checkpoint/target_check.hpp"
#include "harness/exec/calibration.hpp"
#include "harness/run/case_execution.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {

void CaseExecution::start_calibration() {
  const bool own_read = !read_plans_.empty() && phase_ == PhaseSelection::restore;
  const std::vector<RankPlan>& plans = own_read ? read_plans_ : write_plans_;
  const ProcessBuffer& buffer = own_read ? read_buffer_ : write_buffer_;
  std::uint64_t mine = 0;
  for (const RankPlan& p : plans) mine += p.payload_bytes;
  std::string problem;
  try {
    calibration_ = std::make_unique<Calibration>(case_directory(c_) / "calibration", mine,
                                                 buffer.view(), comm_);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (const std::string first = comm_.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: measure.calibration: {}", c_.index, first));
  }
  result_.calibration = CalibrationRecord{.bytes = comm_.sum(mine)};
}

bool CaseExecution::calibrate(bool timed) {
  const auto start = std::chrono::steady_clock::now();
  CalibrationSample sample;
  try {
    sample = calibration_->measure(c_.io, c_.cache, phase_ != PhaseSelection::checkpoint);
  } catch (const std::exception& e) {
    charge("calibration", start);
    return fail(fmt::format("measure.calibration: {}", e.what()));
  }
  charge("calibration", start);
  if (timed) {
    result_.calibration->write_seconds.push_back(sample.write_seconds);
    if (phase_ != PhaseSelection::checkpoint)
      result_.calibration->read_seconds.push_back(sample.read_seconds);
  }
  return true;
}

void CaseExecution::finish_calibration() {
  if (!calibration_) return;
  calibration_->finish();
  calibration_.reset();
}

}  // namespace ckpt::harness
