#include "harness/common/text_format.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace ckpt::harness {
namespace {

constexpr std::array<const char*, 7> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

}  // namespace

std::string group_digits(std::int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kUnits[unit]);
}

std::string format_size_label(std::int64_t bytes) {
  std::size_t unit = 0;
  while (bytes >= 1024 && bytes % 1024 == 0 && unit + 1 < kUnits.size()) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

std::string format_shape(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::string format_slice(const std::vector<std::int64_t>& offset,
                         const std::vector<std::int64_t>& extent) {
  std::string out = "[";
  for (std::size_t i = 0; i < offset.size(); ++i) {
    out += fmt::format("{}{}:{}", i ? ", " : "", offset[i], offset[i] + extent[i]);
  }
  return out + "]";
}

std::optional<double> parse_number(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace ckpt::harness
