#pragma once

// The frame every codec writes (little-endian):
//
//   offset  bytes  field
//        0      4  magic "CKZF"
//        4      1  format version (1)
//        5      1  codec (1 zstd, 2 grouped)
//        6      1  element size in bytes (zstd 1; grouped 2 or 4): the number of planes
//        7      1  zstd level (signed)
//        8      8  raw bytes (what decoding gives back)
//       16      8  payload bytes (everything after this header)
//       24      8  XXH3_64 of the raw bytes
//       32      8  XXH3_64 of the payload
//       40      8  XXH3_64 of header bytes 0-39
//       48         payload: one 8-byte compressed size per plane, then the planes' zstd frames
//
// The header checksum makes a damaged header an error of its own rather than a wrong size or
// codec; the payload checksum refuses damage before zstd reads it; the raw checksum is the
// end-to-end check of what decoding returns.

#include <cstddef>
#include <cstdint>
#include <span>

#include "harness/codec/codec.hpp"

namespace ckpt::harness::codec {

inline constexpr std::size_t kFrameHeaderBytes = 48;
inline constexpr std::uint8_t kFrameVersion = 1;

struct FrameHeader {
  CodecSettings settings;
  std::uint64_t raw_bytes = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t raw_checksum = 0;
  std::uint64_t payload_checksum = 0;

  std::uint64_t frame_bytes() const { return kFrameHeaderBytes + payload_bytes; }
};

// 8 little-endian bytes: the frame's integers.
void put_le64(std::byte* out, std::uint64_t value);
std::uint64_t get_le64(const std::byte* in);

// The header's bytes (header checksum included) into out[0, kFrameHeaderBytes).
void write_frame_header(const FrameHeader& header, std::span<std::byte> out);

// The header at the start of `frame`, checked: length, magic, version, header checksum, codec,
// element size. Throws FrameError saying which. Does not look at the payload.
FrameHeader read_frame_header(std::span<const std::byte> frame);

}  // namespace ckpt::harness::codec
