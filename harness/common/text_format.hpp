#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ckpt::harness {

// 8030261248 -> "8,030,261,248"
std::string group_digits(std::int64_t value);
// Binary units with two decimals: 112423657472 -> "104.70 GiB"; below 1 KiB: "512 B".
std::string format_bytes(std::int64_t bytes);
// Power-of-two sizes without decimals: 1048576 -> "1 MiB".
std::string format_size_label(std::int64_t bytes);
// {4096, 14336} -> "[4096, 14336]"
std::string format_shape(const std::vector<std::int64_t>& shape);
// offset {512, 0}, extent {512, 4096} -> "[512:1024, 0:4096]"
std::string format_slice(const std::vector<std::int64_t>& offset,
                         const std::vector<std::int64_t>& extent);

// The whole of `text` as a number ("2.5", "1e9", "nan", "inf"); nullopt for anything else
// ("", "2s", "x"). Callers check the range (NaN compares false with every bound).
std::optional<double> parse_number(const std::string& text);

}  // namespace ckpt::harness
