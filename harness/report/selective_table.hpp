#pragma once

#include <ostream>
#include <string>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// strategy.selective_every and strategy.partial_experts: per case its rotation, the bytes a full
// checkpoint holds against the median a checkpoint wrote (and the share saved), the oldest
// checkpoint the newest one (or the restore) needs, and the checkpoints a restore read (the
// results' `selective` object). Prints nothing when no case rotated.
void print_selective_table(const ReportModel& model, bool markdown, std::ostream& out);
// The same as an HTML table with its heading ("" when no case rotated).
std::string selective_table_html(const ReportModel& model);

}  // namespace ckpt::harness
