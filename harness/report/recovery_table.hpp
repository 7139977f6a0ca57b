#pragma once

#include <ostream>
#include <string>

#include "harness/report/report_model.hpp"
#include "harness/results/training_summary.hpp"

namespace ckpt::harness {

// A tiered job's recovery after losing nodes (the results' training.recovery), in words: "recovery
// of iteration 1 after losing nodes {1}: 0.012 s; memory 2 parts, 1.2 MiB in 0.001 s; peer 2
// parts, 1.2 MiB in 0.011 s", each source (memory tier, own node's local tier, a peer's, the
// backend) with its parts, bytes and the slowest of its processes' seconds.
std::string recovery_text(const RecoveryRecord& r);

// Per case that recovered: lost nodes, iteration, seconds, and per source its parts, bytes and
// seconds. Prints nothing when no case recovered.
void print_recovery_table(const ReportModel& model, bool markdown, std::ostream& out);
// The same as an HTML table with its heading ("" when no case recovered).
std::string recovery_table_html(const ReportModel& model);

}  // namespace ckpt::harness
