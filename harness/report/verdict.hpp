#pragma once

#include <string>

#include "harness/report/report_format.hpp"
#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// What the sweep shows, in one or two sentences computed from the cases' medians, for the top of
// a report. The leading quantity is the stall of [training] cases, else the write bandwidth, else
// the read (restore, load) bandwidth. For every swept key (and the run, with several) the cases
// that differ in that key alone are matched; each value's figure is the geometric mean over the
// matched settings of the other keys, and the key whose best value beats its worst by the
// largest ratio leads:
//   "By engine.name: lazy stalls the loop 210× less than sync (2.50 ms against 525 ms per
//   checkpoint); its checkpoint is durable 1.05× later (551 ms against 525 ms)."
// with the companion quantity of the same two values (time to durable), or the read's own best
// and worst; a second sentence names the next key's effect, and failed cases are counted. Where
// best and worst have samples, each claim says whether the difference is significant (two-sided
// Mann–Whitney U, p < 0.05): its p-value and sample counts for one setting, "significant (p <
// 0.05) in 1 of 2 tested settings" over several, or "too few samples to test" where `compare`
// would say too few (too_few_samples). Without a key to compare by, the cases themselves are
// compared. "" when no case has a figure.
// Bandwidths in `unit`.
std::string verdict(const ReportModel& model, BandwidthUnit unit = BandwidthUnit::gib);

}  // namespace ckpt::harness
