#include "harness/codec/byte_planes.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace ckpt::harness::codec {
namespace {

std::uint8_t byte_at(std::span<const std::byte> s, std::size_t i) {
  return static_cast<std::uint8_t>(s[i]);
}

void split_bf16(std::span<const std::byte> raw, std::size_t n, std::byte* exponent,
                std::byte* rest) {
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned v = byte_at(raw, 2 * i) | (unsigned{byte_at(raw, 2 * i + 1)} << 8);
    exponent[i] = static_cast<std::byte>((v >> 7) & 0xFFu);
    rest[i] = static_cast<std::byte>(((v >> 8) & 0x80u) | (v & 0x7Fu));
  }
}

void join_bf16(const std::byte* exponent, const std::byte* rest, std::size_t n,
               std::span<std::byte> raw) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto e = static_cast<unsigned>(exponent[i]);
    const auto r = static_cast<unsigned>(rest[i]);
    const unsigned v = ((r & 0x80u) << 8) | (e << 7) | (r & 0x7Fu);
    raw[2 * i] = static_cast<std::byte>(v & 0xFFu);
    raw[2 * i + 1] = static_cast<std::byte>(v >> 8);
  }
}

void split_fp32(std::span<const std::byte> raw, std::size_t n, std::byte* out) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t v = 0;
    for (int b = 3; b >= 0; --b) v = (v << 8) | byte_at(raw, 4 * i + static_cast<std::size_t>(b));
    out[i] = static_cast<std::byte>((v >> 23) & 0xFFu);
    out[n + i] = static_cast<std::byte>(((v >> 24) & 0x80u) | ((v >> 16) & 0x7Fu));
    out[2 * n + i] = static_cast<std::byte>((v >> 8) & 0xFFu);
    out[3 * n + i] = static_cast<std::byte>(v & 0xFFu);
  }
}

void join_fp32(const std::byte* in, std::size_t n, std::span<std::byte> raw) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto e = static_cast<std::uint32_t>(in[i]);
    const auto hi = static_cast<std::uint32_t>(in[n + i]);
    const std::uint32_t v = ((hi & 0x80u) << 24) | (e << 23) | ((hi & 0x7Fu) << 16) |
                            (static_cast<std::uint32_t>(in[2 * n + i]) << 8) |
                            static_cast<std::uint32_t>(in[3 * n + i]);
    for (int b = 0; b < 4; ++b)
      raw[4 * i + static_cast<std::size_t>(b)] = static_cast<std::byte>((v >> (8 * b)) & 0xFFu);
  }
}

void check_element_bytes(int element_bytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4)
    throw std::invalid_argument("byte planes: element size must be 1, 2 (bf16) or 4 (fp32)");
}

}  // namespace

std::size_t plane_bytes(std::size_t bytes, int element_bytes, int plane) {
  const auto k = static_cast<std::size_t>(element_bytes);
  const std::size_t n = bytes / k;
  return plane == element_bytes - 1 ? n + bytes % k : n;
}

void split_planes(std::span<const std::byte> raw, int element_bytes, std::span<std::byte> planes) {
  check_element_bytes(element_bytes);
  if (planes.size() != raw.size()) throw std::invalid_argument("byte planes: sizes differ");
  const auto k = static_cast<std::size_t>(element_bytes);
  const std::size_t n = raw.size() / k;
  if (k == 2) split_bf16(raw, n, planes.data(), planes.data() + n);
  if (k == 4) split_fp32(raw, n, planes.data());
  const std::size_t whole = n * k;
  if (raw.size() > whole)
    std::memcpy(planes.data() + whole, raw.data() + whole, raw.size() - whole);
  if (k == 1 && !raw.empty()) std::memcpy(planes.data(), raw.data(), raw.size());
}

void join_planes(std::span<const std::byte> planes, int element_bytes, std::span<std::byte> raw) {
  check_element_bytes(element_bytes);
  if (planes.size() != raw.size()) throw std::invalid_argument("byte planes: sizes differ");
  const auto k = static_cast<std::size_t>(element_bytes);
  const std::size_t n = raw.size() / k;
  if (k == 2) join_bf16(planes.data(), planes.data() + n, n, raw);
  if (k == 4) join_fp32(planes.data(), n, raw);
  const std::size_t whole = n * k;
  if (raw.size() > whole)
    std::memcpy(raw.data() + whole, planes.data() + whole, raw.size() - whole);
  if (k == 1 && !raw.empty()) std::memcpy(raw.data(), planes.data(), raw.size());
}

}  // namespace ckpt::harness::codec
