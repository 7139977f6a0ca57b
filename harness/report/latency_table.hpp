#pragma once

#include <ostream>
#include <string>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// "812 µs", "3.41 ms", "1.20 s".
std::string format_latency(double seconds);

// measure.latency: per case and direction the requests and their p50 / p99 / p99.9 / max (the
// results' `latency` object). Prints nothing when no case recorded latencies.
void print_latency_table(const ReportModel& model, bool markdown, std::ostream& out);
// The same as an HTML table with its heading ("" when no case recorded latencies).
std::string latency_table_html(const ReportModel& model);

}  // namespace ckpt::harness
