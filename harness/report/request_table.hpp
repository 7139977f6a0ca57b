#pragma once

#include <ostream>
#include <string>

#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// A backend that counts its requests (s3): per case and per place (the write, the read, the
// training loop's checkpoints, the checkpoint store's own), the requests of one checkpoint or
// restore by kind, retries, throttling answers and back-off time, so that a user can apply a
// store's prices. Prints nothing when no case counted any.
void print_request_table(const ReportModel& model, bool markdown, std::ostream& out);
// The same as an HTML table with its heading ("" when no case counted any).
std::string request_table_html(const ReportModel& model);

}  // namespace ckpt::harness
