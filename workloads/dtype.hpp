#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::workloads {

// Element types a checkpoint stores. Sizes are exact bytes per element.
enum class Dtype { fp8, bf16, fp16, fp32, fp64 };

std::int64_t dtype_bytes(Dtype dtype);
std::string_view dtype_name(Dtype dtype);

// Parses "bf16", "fp32", ...; throws std::invalid_argument naming the accepted spellings.
Dtype parse_dtype(std::string_view text);

}  // namespace ckpt::workloads
