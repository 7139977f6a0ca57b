// Every codec round-trips any bytes through its frame; the frame records codec, element size,
// level, sizes and checksums; any damage (header, payload, truncation, trailing bytes, another
// format) is refused with an error that says which.
#include "harness/codec/codec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/codec/frame.hpp"
#include "harness/memory/checksum.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/trained_words.hpp"

namespace ckpt::harness::codec {
namespace {

const std::vector<CodecSettings> kAll{
    {Codec::zstd, 3, 1}, {Codec::grouped, 3, 2}, {Codec::grouped, 1, 4}};

std::vector<std::byte> content(std::size_t bytes, DataPattern pattern, std::uint64_t key) {
  std::vector<std::byte> out(bytes);
  fill_pattern(out.data(), bytes, pattern, key);
  return out;
}

// The FrameError decoding `frame` throws ("" when it decodes).
std::string decode_error(const std::vector<std::byte>& frame) {
  try {
    Decoder().decode(frame);
  } catch (const FrameError& e) {
    return e.what();
  }
  return "";
}

TEST(Codec, EveryCodecRoundTripsAnySize) {
  const std::uint64_t bf16_weight =
      pattern::content_code(pattern::ContentState::weight, pattern::ContentFormat::bf16);
  for (const CodecSettings& s : kAll) {
    Encoder encoder(s);
    Decoder decoder;
    for (std::size_t size : {0, 1, 3, 4, 4097, (1 << 20) + 3}) {
      for (DataPattern p : {DataPattern::random, DataPattern::zeros, DataPattern::trained}) {
        const std::vector<std::byte> raw = content(size, p, pattern::with_content(77, bf16_weight));
        const std::vector<std::byte> frame = encoder.encode(raw);
        EXPECT_LE(frame.size(), encoder.frame_bound(size));
        EXPECT_EQ(decoder.decode(frame), raw) << codec_label(s) << ", " << size << " bytes";
      }
    }
  }
}

TEST(Codec, FrameRecordsCodecElementSizeLevelSizesAndChecksum) {
  const std::vector<std::byte> raw = content(10'000, DataPattern::random, 5);
  const std::vector<std::byte> frame = Encoder({Codec::grouped, 7, 4}).encode(raw);
  const FrameHeader h = read_frame_header(frame);
  EXPECT_EQ(h.settings.codec, Codec::grouped);
  EXPECT_EQ(h.settings.element_bytes, 4);
  EXPECT_EQ(h.settings.level, 7);
  EXPECT_EQ(h.raw_bytes, 10'000u);
  EXPECT_EQ(h.payload_bytes, frame.size() - kFrameHeaderBytes);
  EXPECT_EQ(h.raw_checksum, checksum64(raw.data(), raw.size()));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(frame.data()), 4), "CKZF");
  EXPECT_EQ(static_cast<int>(frame[4]), 1) << "format version";
}

TEST(Codec, ZerosShrinkAndRandomBytesBarelyGrow) {
  for (const CodecSettings& s : kAll) {
    Encoder encoder(s);
    EXPECT_LT(encoder.encode(content(1 << 20, DataPattern::zeros, 1)).size(), 1000u);
    const std::size_t random = encoder.encode(content(1 << 20, DataPattern::random, 1)).size();
    EXPECT_LT(random, (1u << 20) + (1u << 20) / 100) << codec_label(s);
  }
}

TEST(Codec, DamageIsRefusedSayingWhere) {
  const std::vector<std::byte> raw = content(100'000, DataPattern::trained, 0x5);
  const std::vector<std::byte> good = Encoder({Codec::grouped, 3, 2}).encode(raw);
  ASSERT_EQ(decode_error(good), "");
  auto flipped = [&good](std::size_t at) {
    std::vector<std::byte> f = good;
    f[at] ^= std::byte{0x04};
    return f;
  };
  EXPECT_NE(decode_error(flipped(0)).find("not a ckptbench codec frame"), std::string::npos);
  for (std::size_t at : {4, 5, 6, 7, 8, 16, 24, 32, 40, 47}) {
    EXPECT_EQ(decode_error(flipped(at)),
              "damaged frame header: its checksum does not match its bytes")
        << "byte " << at;
  }
  for (std::size_t at :
       {kFrameHeaderBytes, kFrameHeaderBytes + 20, good.size() / 2, good.size() - 1}) {
    EXPECT_EQ(decode_error(flipped(at)),
              "damaged payload: its checksum does not match the frame header's")
        << "byte " << at;
  }
  std::vector<std::byte> cut(good.begin(), good.end() - 1);
  EXPECT_EQ(decode_error(cut).rfind("truncated: the header says", 0), 0u) << decode_error(cut);
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  EXPECT_EQ(decode_error(longer).rfind("bytes after the frame", 0), 0u) << decode_error(longer);
  EXPECT_EQ(decode_error({}), "truncated: 0 bytes, less than a frame header (48 bytes)");
}

TEST(Codec, AFrameWhosePlanesDisagreeWithItsHeaderIsRefused) {
  // A consistent frame (checksums recomputed) whose header claims one byte more than its
  // planes hold: what a writer bug would produce.
  const std::vector<std::byte> raw = content(4096, DataPattern::random, 9);
  std::vector<std::byte> frame = Encoder({Codec::zstd, 3, 1}).encode(raw);
  FrameHeader h = read_frame_header(frame);
  h.raw_bytes += 1;
  write_frame_header(h, frame);
  EXPECT_EQ(decode_error(frame),
            "damaged plane 0: its zstd frame holds 4096 bytes, the header needs 4097 bytes");
}

TEST(Codec, UnusableSettingsAreRefused) {
  EXPECT_EQ(settings_problem({Codec::zstd, 3, 1}), "");
  EXPECT_EQ(settings_problem({Codec::zstd, 3, 2}), "zstd takes element size 1, not 2");
  EXPECT_EQ(settings_problem({Codec::grouped, 3, 3}),
            "grouped takes element size 2 (bf16) or 4 (fp32), not 3");
  EXPECT_NE(settings_problem({Codec::zstd, 0, 1}).find("zstd level 0 is outside 1.."),
            std::string::npos);
  EXPECT_THROW(Encoder({Codec::grouped, 3, 8}), std::invalid_argument);
  const std::vector<std::byte> frame =
      Encoder({Codec::zstd, 3, 1}).encode(content(64, DataPattern::random, 1));
  std::vector<std::byte> wrong_size(63);
  EXPECT_THROW(Decoder().decode(frame, wrong_size), std::invalid_argument);
}

}  // namespace
}  // namespace ckpt::harness::codec
