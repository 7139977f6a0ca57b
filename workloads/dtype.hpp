#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ckpt::workloads {

// Element types a checkpoint stores. Sizes are exact bytes per element. u8 holds packed data of
// another format (MXFP4's blocks of two FP4 values a byte, its E8M0 scales), as safetensors'
// U8 does; it is no state dtype of its own.
enum class Dtype { fp8, bf16, fp16, fp32, fp64, u8 };

std::int64_t dtype_bytes(Dtype dtype);
std::string_view dtype_name(Dtype dtype);

// Parses a state dtype, "bf16", "fp32", ...; throws std::invalid_argument naming the accepted
// spellings (u8 is none).
Dtype parse_dtype(std::string_view text);
// Parses any stored tensor's dtype, u8 included (a manifest's tensors).
Dtype parse_tensor_dtype(std::string_view text);

}  // namespace ckpt::workloads
