#include "backends/hdf5/element_types.hpp"

#include <stdexcept>

#include "backends/hdf5/hdf5_error.hpp"

namespace ckpt::backends::hdf5 {
namespace {

struct FloatLayout {
  std::size_t sign_position;
  std::size_t exponent_position;
  std::size_t exponent_bits;
  std::size_t mantissa_bits;
  std::size_t bits;
  std::size_t exponent_bias;
};

// A little-endian float narrower than fp32, derived from H5T_IEEE_F32LE: the fields are set
// while the precision is still 32, then the precision and the size shrink around them.
TypeId narrow_float(const FloatLayout& layout, const Where& where) {
  TypeId type(check(H5Tcopy(H5T_IEEE_F32LE), where));
  check(H5Tset_fields(type.get(), layout.sign_position, layout.exponent_position,
                      layout.exponent_bits, 0, layout.mantissa_bits),
        where);
  check(H5Tset_precision(type.get(), layout.bits), where);
  check(H5Tset_size(type.get(), layout.bits / 8), where);
  check(H5Tset_ebias(type.get(), layout.exponent_bias), where);
  return type;
}

}  // namespace

std::uint32_t element_bytes_of(std::string_view dtype) {
  if (dtype == "fp8" || dtype == kBytesDtype) return 1;
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32") return 4;
  if (dtype == "fp64") return 8;
  return 0;
}

TypeId file_type_of(std::string_view dtype, const std::string& path) {
  const std::string operation = "make the HDF5 type of " + std::string(dtype) + " for";
  const Where where{operation, path};
  // HDF5 1.10 predefines no 16-bit float: fp16 is built like bf16.
  if (dtype == "fp16") return narrow_float({15, 10, 5, 10, 16, 15}, where);
  if (dtype == "bf16") return narrow_float({15, 7, 8, 7, 16, 127}, where);
  if (dtype == "fp8") return narrow_float({7, 3, 4, 3, 8, 7}, where);
  hid_t predefined = H5I_INVALID_HID;
  if (dtype == "fp32") {
    predefined = H5T_IEEE_F32LE;
  } else if (dtype == "fp64") {
    predefined = H5T_IEEE_F64LE;
  } else if (dtype == kBytesDtype) {
    predefined = H5T_STD_U8LE;
  } else {
    throw std::invalid_argument("hdf5: unknown dtype `" + std::string(dtype) +
                                "` (fp8, bf16, fp16, fp32, fp64)");
  }
  return TypeId(check(H5Tcopy(predefined), where));
}

}  // namespace ckpt::backends::hdf5
