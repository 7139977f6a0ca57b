#pragma once

#include <ostream>
#include <string>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// model.weights: per quantized case its format, the checkpoint's bytes (scales included) against
// the same checkpoint unquantized, and the bytes and share saved (the results' `quantized_weights`
// object). Prints nothing when no case quantized its weights.
void print_quantized_table(const ReportModel& model, bool markdown, std::ostream& out);
// The same as an HTML table with its heading ("" when no case quantized its weights).
std::string quantized_table_html(const ReportModel& model);

}  // namespace ckpt::harness
