#include "harness/codec/codec.hpp"

#include <fmt/format.h>
#include <zstd.h>

#include <cstring>

#include "harness/codec/byte_planes.hpp"
#include "harness/codec/frame.hpp"
#include "harness/memory/checksum.hpp"

namespace ckpt::harness::codec {
namespace {

struct FreeCCtx {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct FreeDCtx {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

int planes_of(const CodecSettings& s) {
  return s.codec == Codec::grouped ? s.element_bytes : 1;
}

void set(ZSTD_CCtx* context, ZSTD_cParameter parameter, int value) {
  const std::size_t r = ZSTD_CCtx_setParameter(context, parameter, value);
  if (ZSTD_isError(r))
    throw std::runtime_error(fmt::format("zstd parameter: {}", ZSTD_getErrorName(r)));
}

// One plane as one zstd frame, at `level`. An exponent plane holds independent draws from a
// distribution of a few bits of entropy: zstd's matches (3-6 bytes, found everywhere in such a
// stream) cost more than the literals they replace, so its match finder is starved (fast
// strategy, a 64-entry hash table, 7-byte matches) and the bytes go to the Huffman coder, as
// ZipNN codes exponents; at level 3 that saves a fifth of the plane.
std::size_t compress_plane(ZSTD_CCtx* context, std::span<std::byte> out,
                           std::span<const std::byte> plane, int level, bool exponents) {
  const std::size_t reset = ZSTD_CCtx_reset(context, ZSTD_reset_session_and_parameters);
  if (ZSTD_isError(reset))
    throw std::runtime_error(fmt::format("zstd reset: {}", ZSTD_getErrorName(reset)));
  set(context, ZSTD_c_compressionLevel, level);
  if (exponents) {
    set(context, ZSTD_c_strategy, ZSTD_fast);
    set(context, ZSTD_c_hashLog, 6);   // the smallest zstd takes
    set(context, ZSTD_c_minMatch, 7);  // the longest (fast strategy)
  }
  return ZSTD_compress2(context, out.data(), out.size(), plane.data(), plane.size());
}

}  // namespace

std::string codec_label(const CodecSettings& s) {
  if (s.codec == Codec::zstd) return "zstd";
  return s.element_bytes == 2 ? "grouped-bf16" : s.element_bytes == 4 ? "grouped-fp32" : "grouped";
}

std::string settings_problem(const CodecSettings& s) {
  if (s.codec != Codec::zstd && s.codec != Codec::grouped)
    return fmt::format("unknown codec {}", static_cast<int>(s.codec));
  if (s.codec == Codec::zstd && s.element_bytes != 1)
    return fmt::format("zstd takes element size 1, not {}", s.element_bytes);
  if (s.codec == Codec::grouped && s.element_bytes != 2 && s.element_bytes != 4)
    return fmt::format("grouped takes element size 2 (bf16) or 4 (fp32), not {}", s.element_bytes);
  if (s.level < 1 || s.level > ZSTD_maxCLevel())
    return fmt::format("zstd level {} is outside 1..{}", s.level, ZSTD_maxCLevel());
  return "";
}

struct Encoder::State {
  CodecSettings settings;
  std::unique_ptr<ZSTD_CCtx, FreeCCtx> context{ZSTD_createCCtx()};
  std::vector<std::byte> planes;
};

Encoder::Encoder(const CodecSettings& settings) : state_(std::make_unique<State>()) {
  if (const std::string problem = settings_problem(settings); !problem.empty())
    throw std::invalid_argument("codec settings: " + problem);
  if (!state_->context) throw std::bad_alloc();
  state_->settings = settings;
}

Encoder::~Encoder() = default;
Encoder::Encoder(Encoder&&) noexcept = default;
Encoder& Encoder::operator=(Encoder&&) noexcept = default;

const CodecSettings& Encoder::settings() const {
  return state_->settings;
}

std::size_t Encoder::frame_bound(std::size_t raw_bytes) const {
  const int planes = planes_of(state_->settings);
  std::size_t bound = kFrameHeaderBytes + 8 * static_cast<std::size_t>(planes);
  for (int p = 0; p < planes; ++p) bound += ZSTD_compressBound(plane_bytes(raw_bytes, planes, p));
  return bound;
}

std::size_t Encoder::encode(std::span<const std::byte> raw, std::span<std::byte> out) {
  const CodecSettings& s = state_->settings;
  const int planes = planes_of(s);
  if (out.size() < frame_bound(raw.size()))
    throw std::invalid_argument("encode: the output is smaller than frame_bound");
  std::span<const std::byte> input = raw;
  if (planes > 1) {
    state_->planes.resize(raw.size());
    split_planes(raw, s.element_bytes, state_->planes);
    input = state_->planes;
  }
  std::size_t at = kFrameHeaderBytes + 8 * static_cast<std::size_t>(planes);
  std::size_t from = 0;
  for (int p = 0; p < planes; ++p) {
    const std::size_t n = plane_bytes(raw.size(), planes, p);
    const std::size_t written =
        compress_plane(state_->context.get(), out.subspan(at), input.subspan(from, n), s.level,
                       planes > 1 && p == 0);
    if (ZSTD_isError(written))
      throw std::runtime_error(fmt::format("zstd compression: {}", ZSTD_getErrorName(written)));
    put_le64(out.data() + kFrameHeaderBytes + 8 * static_cast<std::size_t>(p), written);
    at += written;
    from += n;
  }
  const std::span<const std::byte> payload = out.subspan(kFrameHeaderBytes, at - kFrameHeaderBytes);
  write_frame_header({.settings = s,
                      .raw_bytes = raw.size(),
                      .payload_bytes = payload.size(),
                      .raw_checksum = checksum64(raw.data(), raw.size()),
                      .payload_checksum = checksum64(payload.data(), payload.size())},
                     out);
  return at;
}

std::vector<std::byte> Encoder::encode(std::span<const std::byte> raw) {
  std::vector<std::byte> frame(frame_bound(raw.size()));
  frame.resize(encode(raw, frame));
  return frame;
}

struct Decoder::State {
  std::unique_ptr<ZSTD_DCtx, FreeDCtx> context{ZSTD_createDCtx()};
  std::vector<std::byte> planes;
};

Decoder::Decoder() : state_(std::make_unique<State>()) {
  if (!state_->context) throw std::bad_alloc();
}

Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

namespace {

// The frame's header, after checking everything but the decoded bytes: whole (no bytes missing or
// after it), payload checksum, the plane table inside the payload, and each plane's zstd frame
// stating the size the header implies.
FrameHeader checked_frame(std::span<const std::byte> frame) {
  const FrameHeader h = read_frame_header(frame);
  if (frame.size() - kFrameHeaderBytes != h.payload_bytes) {
    throw FrameError(
        fmt::format("{}: the header says {} payload bytes, the frame holds {}",
                    frame.size() < h.frame_bytes() ? "truncated" : "bytes after the frame",
                    h.payload_bytes, frame.size() - kFrameHeaderBytes));
  }
  const std::span<const std::byte> payload = frame.subspan(kFrameHeaderBytes);
  if (checksum64(payload.data(), payload.size()) != h.payload_checksum)
    throw FrameError("damaged payload: its checksum does not match the frame header's");
  const auto planes = static_cast<std::size_t>(planes_of(h.settings));
  if (payload.size() < 8 * planes) throw FrameError("damaged frame: no room for its plane sizes");
  std::size_t at = 8 * planes;
  for (std::size_t p = 0; p < planes; ++p) {
    const std::uint64_t stored = get_le64(payload.data() + 8 * p);
    if (stored > payload.size() - at)
      throw FrameError(fmt::format("damaged frame: plane {} reaches past the payload", p));
    const unsigned long long holds = ZSTD_getFrameContentSize(payload.data() + at, stored);
    const std::size_t expected =
        plane_bytes(h.raw_bytes, static_cast<int>(planes), static_cast<int>(p));
    if (holds != expected) {
      throw FrameError(
          fmt::format("damaged plane {}: its zstd frame {}, the header needs {} bytes", p,
                      holds >= ZSTD_CONTENTSIZE_ERROR ? std::string("states no size")
                                                      : fmt::format("holds {} bytes", holds),
                      expected));
    }
    at += stored;
  }
  if (at != payload.size()) {
    throw FrameError(
        fmt::format("damaged frame: {} payload bytes after the last plane", payload.size() - at));
  }
  return h;
}

}  // namespace

std::vector<std::byte> Decoder::decode(std::span<const std::byte> frame) {
  std::vector<std::byte> out(checked_frame(frame).raw_bytes);
  decode(frame, out);
  return out;
}

void Decoder::decode(std::span<const std::byte> frame, std::span<std::byte> out) {
  const FrameHeader h = checked_frame(frame);
  if (out.size() != h.raw_bytes) {
    throw std::invalid_argument(
        fmt::format("decode: the frame holds {} bytes, not {}", h.raw_bytes, out.size()));
  }
  const int planes = planes_of(h.settings);
  const std::span<const std::byte> payload = frame.subspan(kFrameHeaderBytes);
  std::span<std::byte> target = out;
  if (planes > 1) {
    state_->planes.resize(out.size());
    target = state_->planes;
  }
  std::size_t at = 8 * static_cast<std::size_t>(planes);
  std::size_t to = 0;
  for (int p = 0; p < planes; ++p) {
    const std::uint64_t stored = get_le64(payload.data() + 8 * static_cast<std::size_t>(p));
    const std::size_t n = plane_bytes(out.size(), planes, p);
    const std::size_t got = ZSTD_decompressDCtx(state_->context.get(), target.data() + to, n,
                                                payload.data() + at, stored);
    if (ZSTD_isError(got))
      throw FrameError(fmt::format("damaged plane {}: zstd: {}", p, ZSTD_getErrorName(got)));
    if (got != n)
      throw FrameError(fmt::format("damaged plane {}: {} bytes decoded, {} expected", p, got, n));
    at += stored;
    to += n;
  }
  if (planes > 1) join_planes(state_->planes, planes, out);
  if (checksum64(out.data(), out.size()) != h.raw_checksum)
    throw FrameError("the decoded bytes do not match the frame's checksum of the original bytes");
}

}  // namespace ckpt::harness::codec
