#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/results/case_result.hpp"

namespace ckpt::harness {

// How bandwidths are printed: GiB/s (2^30 bytes per second, the default, as IOR) or GB/s (10^9,
// as DLIO and MLPerf Storage report).
enum class BandwidthUnit { gib, gb };

// "GiB" or "GB"; nullopt for anything else.
std::optional<BandwidthUnit> parse_bandwidth_unit(const std::string& text);
// "GiB/s" or "GB/s".
std::string unit_label(BandwidthUnit unit);
// 2^30 or 10^9.
double unit_bytes(BandwidthUnit unit);

// "strategy.mapping=file_per_rank backend.direct=true" (or "-" when nothing is swept).
std::string swept_label(const nlohmann::json& swept);

// Decimals that show `value` with three significant digits (0 to 6): 0.102 -> 3, 1.01 -> 2, 123 ->
// 0.
int significant_decimals(double value);
// `value` with three significant digits: 0.1023 -> "0.102", 12.345 -> "12.3", 70901.2 -> "70901".
std::string format_significant(double value);
// A p-value as the tables print it: three decimals, or scientific below 0.001 ("0.031", "2.4e-05").
std::string format_p_value(double p);

// Characters as a terminal shows them: UTF-8 code points (the dashes of the table are one each).
std::size_t display_width(const std::string& text);
// `text` padded with spaces to `width` display columns, on the left (right-aligned) or the right.
std::string pad_left(const std::string& text, std::size_t width);
std::string pad_right(const std::string& text, std::size_t width);

// A bandwidth cell: the median over the timed iterations (bytes / median time) and, with more
// than one iteration, the range: "1.01 [0.95–1.10]"; all three with the median's decimals.
// "-": the phase did not run; "—": the backend stores nothing (its rate is the harness's overhead).
std::string bandwidth_cell(const CaseResult& result, const std::optional<PhaseSummary>& phase,
                           BandwidthUnit unit);

}  // namespace ckpt::harness
