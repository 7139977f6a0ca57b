// Byte grouping puts each element's 8-bit exponent in a plane of its own (sign and mantissa in
// the others) and gives any bytes back, tails included.
#include "harness/codec/byte_planes.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace ckpt::harness::codec {
namespace {

std::vector<std::byte> bytes_of(std::initializer_list<unsigned> values) {
  std::vector<std::byte> out;
  for (unsigned v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(BytePlanes, Bf16ExponentsFillPlaneZero) {
  // 1.0 = 0x3F80 (exponent 127, mantissa 0); -1.5 = 0xBFC0 (sign, exponent 127, mantissa 0x40);
  // 2^-6 with mantissa 0x7F = 0x3CFF (exponent 121). Little-endian.
  const std::vector<std::byte> raw = bytes_of({0x80, 0x3F, 0xC0, 0xBF, 0xFF, 0x3C});
  std::vector<std::byte> planes(raw.size());
  split_planes(raw, 2, planes);
  EXPECT_EQ(planes, bytes_of({127, 127, 121, 0x00, 0xC0, 0x7F}));
  std::vector<std::byte> back(raw.size());
  join_planes(planes, 2, back);
  EXPECT_EQ(back, raw);
}

TEST(BytePlanes, Fp32ExponentThenSignAndMantissaHighToLow) {
  // 1.0f = 0x3F800000; -2.5f = 0xC0200000 (sign, exponent 128, mantissa 0x200000);
  // 0x3E12'3456 (exponent 124, mantissa 0x123456).
  const std::vector<std::byte> raw =
      bytes_of({0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0, 0x56, 0x34, 0x12, 0x3E});
  std::vector<std::byte> planes(raw.size());
  split_planes(raw, 4, planes);
  EXPECT_EQ(planes,
            bytes_of({127, 128, 124, 0x00, 0xA0, 0x12, 0x00, 0x00, 0x34, 0x00, 0x00, 0x56}));
  std::vector<std::byte> back(raw.size());
  join_planes(planes, 4, back);
  EXPECT_EQ(back, raw);
}

TEST(BytePlanes, AnyBytesAndTailsRoundTrip) {
  for (int k : {1, 2, 4}) {
    for (std::size_t size = 0; size < 19; ++size) {
      std::vector<std::byte> raw(size);
      for (std::size_t i = 0; i < size; ++i) raw[i] = static_cast<std::byte>((i * 151 + 7) & 0xFF);
      std::vector<std::byte> planes(size);
      split_planes(raw, k, planes);
      std::vector<std::byte> back(size);
      join_planes(planes, k, back);
      EXPECT_EQ(back, raw) << "element size " << k << ", " << size << " bytes";
      std::size_t total = 0;
      for (int p = 0; p < k; ++p) total += plane_bytes(size, k, p);
      EXPECT_EQ(total, size);
      // The tail follows the last plane unchanged.
      const std::size_t tail = size % static_cast<std::size_t>(k);
      for (std::size_t t = 0; t < tail; ++t)
        EXPECT_EQ(planes[size - tail + t], raw[size - tail + t]);
    }
  }
}

TEST(BytePlanes, RefusesOtherElementSizes) {
  std::vector<std::byte> raw(6);
  std::vector<std::byte> planes(6);
  EXPECT_THROW(split_planes(raw, 3, planes), std::invalid_argument);
  EXPECT_THROW(join_planes(planes, 8, raw), std::invalid_argument);
}

}  // namespace
}  // namespace ckpt::harness::codec
