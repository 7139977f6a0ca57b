// A compressed checkpoint's load: decoded_manifest lays each file's pieces back to back in their
// stored order, and load_framed reads the whole frames of every piece a range touches, decodes
// them and puts exactly the ranges' bytes in place; a damaged frame is named by file, byte and
// tensor.
#include "harness/load/framed_load.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "harness/codec/codec.hpp"
#include "harness/loadplan/load_plan.hpp"
#include "harness/memory/host_space.hpp"
#include "tests/unit/temp_dir.hpp"

namespace ckpt::harness {
namespace {

// Bytes with runs, so that zstd shrinks them.
std::string raw_bytes(std::size_t n, unsigned seed) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((i / 16 * seed) % 251);
  return out;
}

// Three pieces: 1000 and 3000 bytes stored in that order in file "a" (the manifest lists the
// second first), 500 bytes in file "c".
struct FramedCheckpoint {
  FramedCheckpoint() {
    manifest.writer.compression.codec = Compression::zstd;
    codec::Encoder encoder({.codec = codec::Codec::zstd, .level = 1, .element_bytes = 1});
    std::string a, c;
    for (const auto& [name, size, file] :
         {std::tuple{"p0", 1000, &a}, std::tuple{"p1", 3000, &a}, std::tuple{"p2", 500, &c}}) {
      raw.push_back(
          raw_bytes(static_cast<std::size_t>(size), static_cast<unsigned>(raw.size() + 3)));
      const std::vector<std::byte> frames =
          encoder.encode(std::as_bytes(std::span(raw.back().data(), raw.back().size())));
      ManifestTensor t;
      t.shard.name = name;
      t.file = file == &a ? "a" : "c";
      t.file_offset = file->size();
      t.bytes = static_cast<std::uint64_t>(size);
      t.stored_bytes = frames.size();
      file->append(reinterpret_cast<const char*>(frames.data()), frames.size());
      manifest.tensors.push_back(t);
    }
    std::swap(manifest.tensors[0], manifest.tensors[1]);
    manifest.files = {{"a", a.size()}, {"c", c.size()}};
    dir.write("a", a);
    dir.write("c", c);
  }
  std::string path(const char* file) const { return (dir.path() / file).string(); }

  test_support::TempDir dir;
  Manifest manifest;
  std::vector<std::string> raw;  // p0, p1, p2
};

TEST(FramedLoad, DecodedFilesHoldEachFilesPiecesBackToBackInStoredOrder) {
  const FramedCheckpoint f;
  const Manifest d = decoded_manifest(f.manifest);
  EXPECT_FALSE(d.writer.compression.enabled());
  ASSERT_EQ(d.tensors.size(), 3u);
  EXPECT_EQ(d.tensors[0].shard.name, "p1");
  EXPECT_EQ(d.tensors[0].file_offset, 1000u);  // after p0, which is stored before it
  EXPECT_EQ(d.tensors[1].file_offset, 0u);
  EXPECT_EQ(d.tensors[2].file_offset, 0u);
  for (const ManifestTensor& t : d.tensors) EXPECT_EQ(t.stored_bytes, 0u);
  EXPECT_EQ(d.files[0].min_size, 4000u);
  EXPECT_EQ(d.files[1].min_size, 500u);
}

TEST(FramedLoad, RangesComeOutOfTheWholeDecodedPiecesTheyTouch) {
  FramedCheckpoint f;
  const std::unique_ptr<MemorySpace> host = make_host_space();
  const std::unique_ptr<Buffer> into = host->allocate(8192);
  into->zero();
  // File a's decoded bytes 900..1100 span p0's end and p1's start; c's 100..150 lie inside p2.
  const FileRanges ranges{.files = {f.path("a"), f.path("c")},
                          .ranges = {{0, 900, 0, 200}, {1, 100, 4096, 50}}};
  const LoadSettings settings{.method = LoadMethod::read};
  const LoadTiming t =
      load_framed(ranges, framed_files(f.manifest, f.dir.path()), *into, settings, *host, {});
  std::uint64_t stored = 0;
  for (const ManifestTensor& piece : f.manifest.tensors) stored += piece.stored_bytes;
  EXPECT_EQ(t.decode.raw_bytes, 4500u);  // every piece whole
  EXPECT_EQ(t.decode.stored_bytes, stored);
  EXPECT_LT(stored, 4500u);
  EXPECT_EQ(t.bytes, 250u);
  const std::byte* at = into->view().data;
  EXPECT_EQ(std::memcmp(at, f.raw[0].data() + 900, 100), 0);
  EXPECT_EQ(std::memcmp(at + 100, f.raw[1].data(), 100), 0);
  EXPECT_EQ(std::memcmp(at + 4096, f.raw[2].data() + 100, 50), 0);

  const ManifestTensor& p1 = f.manifest.tensors[0];
  {  // one byte in the middle of p1's frames, flipped
    std::fstream file(f.path("a"), std::ios::in | std::ios::out | std::ios::binary);
    const auto byte = static_cast<std::streamoff>(p1.file_offset + p1.stored_bytes / 2);
    file.seekg(byte);
    const char old = static_cast<char>(file.get());
    file.seekp(byte);
    file.put(static_cast<char>(old ^ 0x5a));
  }
  try {
    load_framed(ranges, framed_files(f.manifest, f.dir.path()), *into, settings, *host, {});
    ADD_FAILURE() << "a damaged frame was decoded";
  } catch (const std::runtime_error& e) {
    const std::string named =
        f.path("a") + " at byte " + std::to_string(p1.file_offset) + ": tensor p1 (";
    EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("damaged compressed piece"), std::string::npos);
  }
}

}  // namespace
}  // namespace ckpt::harness
