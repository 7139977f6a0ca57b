#include "harness/report/report_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/common/elapsed.hpp"

namespace ckpt::harness {

std::optional<BandwidthUnit> parse_bandwidth_unit(const std::string& text) {
  if (text == "GiB") return BandwidthUnit::gib;
  if (text == "GB") return BandwidthUnit::gb;
  return std::nullopt;
}

std::string unit_label(BandwidthUnit unit) {
  return unit == BandwidthUnit::gib ? "GiB/s" : "GB/s";
}

double unit_bytes(BandwidthUnit unit) {
  return unit == BandwidthUnit::gib ? kGiB : 1e9;
}

std::string swept_label(const nlohmann::json& swept) {
  std::string label;
  for (const auto& [key, value] : swept.items()) {
    label += (label.empty() ? "" : " ") + key + "=" +
             (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return label.empty() ? "-" : label;
}

int significant_decimals(double value) {
  if (!(std::abs(value) > 0) || !std::isfinite(value)) return 0;
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
  return std::clamp(2 - magnitude, 0, 6);
}

std::string format_significant(double value) {
  return fmt::format("{:.{}f}", value, significant_decimals(value));
}

std::string format_p_value(double p) {
  return p >= 0.001 ? fmt::format("{:.3f}", p) : fmt::format("{:.1e}", p);
}

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
  const std::size_t w = display_width(text);
  return w >= width ? text : text + std::string(width - w, ' ');
}

std::string bandwidth_cell(const CaseResult& result, const std::optional<PhaseSummary>& phase,
                           BandwidthUnit unit) {
  if (!phase || phase->iteration_seconds.empty() || !(phase->seconds > 0)) return "-";
  if (!result.stores_data) return "—";
  const double bytes = static_cast<double>(result.bytes_per_checkpoint) / unit_bytes(unit);
  const double median = bytes / phase->seconds;
  const int decimals = significant_decimals(median);
  const auto [fastest, slowest] =
      std::minmax_element(phase->iteration_seconds.begin(), phase->iteration_seconds.end());
  if (phase->iteration_seconds.size() == 1 || !(*fastest > 0))
    return fmt::format("{:.{}f}", median, decimals);
  return fmt::format("{:.{}f} [{:.{}f}–{:.{}f}]", median, decimals, bytes / *slowest, decimals,
                     bytes / *fastest, decimals);
}

}  // namespace ckpt::harness
