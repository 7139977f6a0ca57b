#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/report/projection.hpp"
#include "harness/report/report_model.hpp"

namespace ckpt::harness {

// `text` with & < > " ' replaced by entities: safe inside HTML text and attribute values.
std::string html_escape(const std::string& text);

// A <table> of `header` and `rows`, every cell escaped; the columns from `text_columns` on are
// numbers (right-aligned).
std::string html_table(const std::vector<std::string>& header,
                       const std::vector<std::vector<std::string>>& rows, std::size_t text_columns);

// The style sheet of every page (inside <style>): the report's and the projection's look alike.
std::string html_style();

// One self-contained HTML page: the tables of the text report and inline SVG charts drawn here
// (bandwidth per case with min–max whiskers, bandwidth against each numeric swept key, stacked
// phase bars), and with `projection` its section (projection_section_html). No script, no style
// sheet or font fetched: it renders offline.
std::string html_report(const ReportModel& model, const ProjectionModel* projection = nullptr);

}  // namespace ckpt::harness
