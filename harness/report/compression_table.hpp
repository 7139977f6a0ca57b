#pragma once

#include <ostream>
#include <string>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// strategy.compression: per compressed case its codec, the bytes one checkpoint stores against
// the bytes it decodes to (ratio and share saved), and the median encode and decode seconds with
// their CPU seconds (the results' `compression` object). Prints nothing when no case compressed.
void print_compression_table(const ReportModel& model, bool markdown, std::ostream& out);
// The same as an HTML table with its heading ("" when no case compressed).
std::string compression_table_html(const ReportModel& model);

}  // namespace ckpt::harness
