// Checksums are XXH3_64 exactly as other xxHash bindings compute it (reference values from
// Python's xxhash 3.x with xxHash 0.8.4), piece by piece as in one go, and see every byte.
#include "harness/memory/checksum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/memory/data_pattern.hpp"

namespace ckpt::harness {
namespace {

std::vector<std::byte> pattern_bytes(std::uint64_t bytes) {
  std::vector<std::byte> data(bytes);
  fill_pattern(data.data(), data.size(), DataPattern::random, 42);
  return data;
}

// Checksum64 over `data` in consecutive pieces of the sizes in `pieces`, repeated to the end.
std::uint64_t piecewise(const std::vector<std::byte>& data,
                        const std::vector<std::uint64_t>& pieces) {
  Checksum64 sum;
  std::uint64_t done = 0;
  for (std::size_t i = 0; done < data.size(); ++i) {
    const std::uint64_t n = std::min<std::uint64_t>(pieces[i % pieces.size()], data.size() - done);
    sum.update(data.data() + done, n);
    done += n;
  }
  return sum.value();
}

TEST(Checksum, MatchesXxh3ReferenceValues) {
  EXPECT_EQ(checksum64(std::string_view{}), 0x2D06800538D394C2ULL);
  EXPECT_EQ(checksum64(nullptr, 0), 0x2D06800538D394C2ULL);
  EXPECT_EQ(checksum_hex(checksum64(std::string_view{})),
            "2d06800538d394c2");  // xxh3_64_hexdigest(b"")
  EXPECT_EQ(checksum64("abc"), 0x78AF5F94892F3950ULL);
  // 3000 bytes (XXH3's long-input path, several 1 KiB blocks and a tail): bytes(i % 251 for i in
  // range(3000)).
  std::string ramp(3000, '\0');
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<char>(i % 251);
  EXPECT_EQ(checksum_hex(checksum64(ramp)), "1b846747012c24aa");
  EXPECT_EQ(checksum64(reinterpret_cast<const std::byte*>(ramp.data()), ramp.size()),
            checksum64(ramp));
  EXPECT_EQ(checksum_hex(0x00000000000000ffULL), "00000000000000ff") << "leading zeros kept";
  EXPECT_EQ(std::string(kChecksumAlgorithm), "xxh3_64");
}

TEST(Checksum, PiecesOfAnySizeGiveTheOneShotValue) {
  // 3 MiB + 7: crosses XXH3's 256-byte internal buffer and 1 KiB blocks at every phase.
  const std::vector<std::byte> data = pattern_bytes((std::uint64_t{3} << 20) + 7);
  const std::uint64_t whole = checksum64(data.data(), data.size());
  const std::vector<std::vector<std::uint64_t>> splits{
      {1},          {7},    {3, 250, 1},      {255, 17},
      {256},        {1027}, {4093, 0, 65537}, {std::uint64_t{1} << 20},
      {data.size()}};
  for (const auto& pieces : splits) {
    EXPECT_EQ(piecewise(data, pieces), whole) << "pieces of " << ::testing::PrintToString(pieces);
  }
  // Short inputs take other code paths in one shot (0-16, 17-128, 129-240 bytes).
  for (const std::uint64_t bytes : {1u, 16u, 17u, 128u, 129u, 240u, 241u}) {
    const std::vector<std::byte> small(data.begin(),
                                       data.begin() + static_cast<std::ptrdiff_t>(bytes));
    EXPECT_EQ(piecewise(small, {1, 2}), checksum64(small.data(), small.size()))
        << bytes << " bytes";
  }
  EXPECT_EQ(Checksum64().value(), 0x2D06800538D394C2ULL) << "no pieces: the empty input's value";
}

TEST(Checksum, EveryCorruptedByteChangesTheChecksum) {
  std::vector<std::byte> data = pattern_bytes(100003);
  const std::uint64_t good = checksum64(data.data(), data.size());
  for (const std::size_t at :
       {std::size_t{0}, std::size_t{255}, std::size_t{50000}, data.size() - 1}) {
    data[at] ^= std::byte{0x01};
    EXPECT_NE(checksum64(data.data(), data.size()), good) << "byte " << at;
    EXPECT_NE(piecewise(data, {4096, 13}), good) << "byte " << at << ", piecewise";
    data[at] ^= std::byte{0x01};
  }
  EXPECT_EQ(checksum64(data.data(), data.size()), good);
}

}  // namespace
}  // namespace ckpt::harness
