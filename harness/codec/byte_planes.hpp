#pragma once

// Byte grouping for floating-point tensors (ZipNN's observation: the exponents of trained weights
// carry 2-3 bits of entropy, the mantissas nearly their full width, so an entropy coder does far
// better on each apart than on the bytes as stored). The elements' bits are regrouped so that the
// 8-bit exponent fills a byte of its own: plane 0 holds every element's exponent, plane 1 its sign
// and top 7 mantissa bits, planes 2 and 3 (fp32) the rest of the mantissa, low byte last.
//
// element_bytes 2 reads the elements as bf16 (s eeeeeeee mmmmmmm), 4 as fp32 (s eeeeeeee m*23),
// little-endian; 1 is the identity. Bytes past the last whole element (size % element_bytes)
// follow the last plane unchanged. Any bytes round-trip, whatever they hold.

#include <cstddef>
#include <span>

namespace ckpt::harness::codec {

// Elements per plane for `bytes` bytes: bytes / element_bytes; the last plane also holds the tail.
std::size_t plane_bytes(std::size_t bytes, int element_bytes, int plane);

// Writes the planes of `raw` one after another into `planes` (raw.size() bytes).
void split_planes(std::span<const std::byte> raw, int element_bytes, std::span<std::byte> planes);

// The inverse: `planes` (as split_planes wrote them) back into `raw` (planes.size() bytes).
void join_planes(std::span<const std::byte> planes, int element_bytes, std::span<std::byte> raw);

}  // namespace ckpt::harness::codec
