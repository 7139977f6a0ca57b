#include "backends/s3/s3_checksum.hpp"

#include <array>
#include <cstdint>

namespace ckpt::backends::s3 {
namespace {

std::uint32_t crc32(std::string_view bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (const char b : bytes) c = table[(c ^ static_cast<std::uint8_t>(b)) & 0xFFu] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// Base64 of the checksum's four bytes, most significant first.
std::string base64_of(std::uint32_t value) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const std::uint64_t bits = std::uint64_t{value} << 16;  // six digits of 6 bits, then "=="
  std::string out;
  for (int shift = 42; shift >= 12; shift -= 6) out += kDigits[(bits >> shift) & 63];
  return out + "==";
}

}  // namespace

std::string crc32_base64(std::string_view bytes) {
  return base64_of(crc32(bytes));
}

}  // namespace ckpt::backends::s3
