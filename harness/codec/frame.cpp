#include "harness/codec/frame.hpp"

#include <fmt/format.h>

#include <array>

#include "harness/memory/checksum.hpp"

namespace ckpt::harness::codec {
namespace {

constexpr std::array<std::uint8_t, 4> kMagic{'C', 'K', 'Z', 'F'};
constexpr std::size_t kChecksummedBytes = 40;

}  // namespace

void put_le64(std::byte* out, std::uint64_t value) {
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFu);
}

std::uint64_t get_le64(const std::byte* in) {
  std::uint64_t v = 0;
  for (std::size_t i = 8; i-- > 0;) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

void write_frame_header(const FrameHeader& h, std::span<std::byte> out) {
  for (std::size_t i = 0; i < kMagic.size(); ++i) out[i] = static_cast<std::byte>(kMagic[i]);
  out[4] = static_cast<std::byte>(kFrameVersion);
  out[5] = static_cast<std::byte>(h.settings.codec);
  out[6] = static_cast<std::byte>(h.settings.element_bytes);
  out[7] =
      static_cast<std::byte>(static_cast<std::uint8_t>(static_cast<std::int8_t>(h.settings.level)));
  put_le64(out.data() + 8, h.raw_bytes);
  put_le64(out.data() + 16, h.payload_bytes);
  put_le64(out.data() + 24, h.raw_checksum);
  put_le64(out.data() + 32, h.payload_checksum);
  put_le64(out.data() + 40, checksum64(out.data(), kChecksummedBytes));
}

FrameHeader read_frame_header(std::span<const std::byte> frame) {
  if (frame.size() < kFrameHeaderBytes) {
    throw FrameError(fmt::format("truncated: {} bytes, less than a frame header ({} bytes)",
                                 frame.size(), kFrameHeaderBytes));
  }
  for (std::size_t i = 0; i < kMagic.size(); ++i) {
    if (static_cast<std::uint8_t>(frame[i]) != kMagic[i]) {
      throw FrameError(fmt::format(
          "not a ckptbench codec frame: it starts with {:02x} {:02x} {:02x} {:02x}, not \"CKZF\"",
          static_cast<std::uint8_t>(frame[0]), static_cast<std::uint8_t>(frame[1]),
          static_cast<std::uint8_t>(frame[2]), static_cast<std::uint8_t>(frame[3])));
    }
  }
  if (get_le64(frame.data() + 40) != checksum64(frame.data(), kChecksummedBytes))
    throw FrameError("damaged frame header: its checksum does not match its bytes");
  const auto version = static_cast<std::uint8_t>(frame[4]);
  if (version != kFrameVersion) {
    throw FrameError(fmt::format(
        "frame format version {} (this build reads version {}): written by another ckptbench",
        version, kFrameVersion));
  }
  FrameHeader h;
  h.settings.codec = static_cast<Codec>(static_cast<std::uint8_t>(frame[5]));
  h.settings.element_bytes = static_cast<std::uint8_t>(frame[6]);
  h.settings.level = static_cast<std::int8_t>(frame[7]);
  if (const std::string problem = settings_problem(h.settings); !problem.empty())
    throw FrameError("frame header names no usable codec: " + problem);
  h.raw_bytes = get_le64(frame.data() + 8);
  h.payload_bytes = get_le64(frame.data() + 16);
  h.raw_checksum = get_le64(frame.data() + 24);
  h.payload_checksum = get_le64(frame.data() + 32);
  return h;
}

}  // namespace ckpt::harness::codec
