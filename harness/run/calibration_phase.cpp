#include "harness/run/calibration_phase.hpp"

#include <fmt/format.h>

#include "harness/checkpoint/target_check.hpp"
#include "harness/run/case_runner.hpp"

namespace ckpt::harness {

CalibrationPhase::CalibrationPhase(CaseState& state) : s_(state) {}

void CalibrationPhase::start() {
  const CaseContext& context = s_.context;
  const CaseBuffers& data = s_.data;
  // The restore phase writes nothing: its read plans and buffer, even when they are empty.
  const bool own_read = context.phase == PhaseSelection::restore;
  const std::vector<RankPlan>& plans = own_read ? data.read_plans : data.write_plans;
  const ProcessBuffer& buffer = own_read ? data.read_buffer : data.write_buffer;
  std::uint64_t mine = 0;
  for (const RankPlan& p : plans) mine += p.payload_bytes;
  std::string problem;
  try {
    calibration_ = std::make_unique<Calibration>(case_directory(context.c) / "calibration", mine,
                                                 buffer.view(), context.comm);
  } catch (const std::exception& e) {
    problem = e.what();
  }
  if (const std::string first = context.comm.first_problem(problem); !first.empty()) {
    throw SetupError(fmt::format("case {}: measure.calibration: {}", context.c.index, first));
  }
  s_.record.result.calibration = CalibrationRecord{.bytes = context.comm.sum(mine)};
}

bool CalibrationPhase::sample(bool timed) {
  const Case& c = s_.context.c;
  const bool read = s_.context.phase != PhaseSelection::checkpoint;
  CaseRecorder& record = s_.record;
  const auto start = Clock::now();
  CalibrationSample sample;
  try {
    sample = calibration_->measure(c.io, c.cache, read);
  } catch (const std::exception& e) {
    record.charge("calibration", start);
    return record.fail(fmt::format("measure.calibration: {}", e.what()));
  }
  record.charge("calibration", start);
  if (timed) {
    record.result.calibration->write_seconds.push_back(sample.write_seconds);
    if (read) record.result.calibration->read_seconds.push_back(sample.read_seconds);
  }
  return true;
}

void CalibrationPhase::finish() {
  if (!calibration_) return;
  calibration_->finish();
  calibration_.reset();
}

}  // namespace ckpt::harness
