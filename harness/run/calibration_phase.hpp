#pragma once

// Private to harness/run: measure.calibration inside a case: a Calibration of the case's bytes,
// one sample before each iteration (so calibration and case alternate and see the same noise),
// recorded per timed one.
#include <memory>

#include "harness/exec/calibration.hpp"
#include "harness/run/case_state.hpp"

namespace ckpt::harness {

class CalibrationPhase {
 public:
  explicit CalibrationPhase(CaseState& state);

  // Collective, once the buffers are prepared: the calibration's files; SetupError when they
  // cannot be made.
  void start();
  bool started() const { return calibration_ != nullptr; }
  // One sample, kept when `timed`; false (the case failed) when it could not be taken.
  bool sample(bool timed);
  // Removes the calibration's files (nothing when not started).
  void finish();

 private:
  CaseState& s_;
  std::unique_ptr<Calibration> calibration_;
};

}  // namespace ckpt::harness
