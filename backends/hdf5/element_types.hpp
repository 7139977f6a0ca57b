#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "backends/hdf5/hdf5_id.hpp"

namespace ckpt::backends::hdf5 {

// The dtype of the raw-byte dataset that stores plans without dataset pieces.
inline constexpr std::string_view kBytesDtype = "u8";

// Bytes per element of a dtype the backend stores ("fp8", "bf16", "fp16", "fp32", "fp64", and
// "u8" for raw bytes); 0 for any other name.
std::uint32_t element_bytes_of(std::string_view dtype);

// The HDF5 type of `dtype`, used both in the file and in memory so that bytes round-trip
// unconverted: IEEE little-endian fp32/fp64; fp16 as IEEE binary16 (built: HDF5 1.10
// predefines none); bf16 as a 16-bit float with IEEE fp32's
// 8-bit exponent (bias 127) and 7 mantissa bits; fp8 as e4m3 (4-bit exponent, bias 7, 3
// mantissa bits); u8 as unsigned 8-bit. Throws IoError (naming `path`) when HDF5 refuses, and
// std::invalid_argument for an unknown dtype.
TypeId file_type_of(std::string_view dtype, const std::string& path);

}  // namespace ckpt::backends::hdf5
