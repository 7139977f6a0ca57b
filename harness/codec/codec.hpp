#pragma once

// Lossless codecs for checkpoint bytes, each output one self-checking frame (FrameHeader):
//   zstd     the bytes as they are, zstd at a level (libzstd);
//   grouped  the bytes regrouped into planes first (split_planes: the exponents of bf16 or
//            fp32 elements apart from their signs and mantissas), each plane zstd-compressed on
//            its own: ZipNN's byte grouping, with zstd as the entropy coder.
// A caller compresses per shard or per chunk: one frame per call. Decoding checks the frame
// (header, sizes, payload and decoded checksums) and refuses any damage with a FrameError.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ckpt::harness::codec {

enum class Codec : std::uint8_t { zstd = 1, grouped = 2 };

struct CodecSettings {
  Codec codec = Codec::zstd;
  int level = 3;          // zstd's compression level, 1 .. ZSTD_maxCLevel()
  int element_bytes = 1;  // zstd: 1; grouped: 2 (bf16) or 4 (fp32)
};

// "zstd" or "grouped-bf16" / "grouped-fp32".
std::string codec_label(const CodecSettings& settings);

// Why `settings` cannot be used ("" when they can): the codec, element size or level.
std::string settings_problem(const CodecSettings& settings);

// A frame that is damaged, truncated, has bytes after it or is no frame at all: says what is
// wrong; the caller names the file or shard.
class FrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Compresses buffers into frames, reusing its zstd context and scratch memory across calls. One
// per thread (not thread-safe). Throws std::invalid_argument for unusable settings.
class Encoder {
 public:
  explicit Encoder(const CodecSettings& settings);
  ~Encoder();
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;

  const CodecSettings& settings() const;
  // The most bytes the frame of `raw_bytes` bytes can take.
  std::size_t frame_bound(std::size_t raw_bytes) const;
  // One frame holding `raw`, into `out` (at least frame_bound(raw.size()) bytes); its size.
  std::size_t encode(std::span<const std::byte> raw, std::span<std::byte> out);
  std::vector<std::byte> encode(std::span<const std::byte> raw);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Decodes frames of any codec, reusing its zstd context and scratch memory. One per thread.
class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  // The bytes `frame` (exactly one frame) holds, into `out`, whose size must be the frame's raw
  // size (frame_info). Throws FrameError when the frame is not whole and undamaged; `out` may
  // then hold anything.
  void decode(std::span<const std::byte> frame, std::span<std::byte> out);
  std::vector<std::byte> decode(std::span<const std::byte> frame);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ckpt::harness::codec
