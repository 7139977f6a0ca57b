#pragma once

#include <string>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// The training loop of every [training] case that recorded its timestamps, on one time axis from
// the loop's start: per case a lane of the loop itself (compute, update, stalls) and lanes of the
// checkpoint's steps (snapshot copy; flush and commit), with each checkpoint's due point and
// durable point marked. Long loops are cut after kTimelineIterations iterations, saying so. ""
// when no case recorded its loop.
std::string timeline_chart(const ReportModel& model);

inline constexpr std::size_t kTimelineIterations = 40;

}  // namespace ckpt::harness
