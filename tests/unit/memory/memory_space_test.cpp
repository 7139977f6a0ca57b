// Every memory space this build and machine offer fills, verifies and checksums exactly like
// the host pattern; spaces that are missing skip with the reason.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "harness/memory/checksum.hpp"
#include "harness/memory/data_pattern.hpp"
#include "harness/memory/memory_spaces.hpp"

namespace ckpt::harness {
namespace {

// One set of spaces for the suite.
class MemorySpaceTest : public ::testing::TestWithParam<MemorySpaceKind> {
 protected:
  static void SetUpTestSuite() { spaces_ = std::make_unique<MemorySpaces>(); }
  static void TearDownTestSuite() { spaces_.reset(); }

  // Why the space under test is missing here ("memory.space = \"cuda\": no CUDA device (...)"), or
  // "".
  std::string missing() const {
    const auto why = spaces_->unavailable(GetParam());
    return why ? "memory.space = \"" + std::string(memory_space_name(GetParam())) + "\": " + *why
               : "";
  }
  MemorySpace& space() { return spaces_->get(GetParam()); }

  static std::unique_ptr<MemorySpaces> spaces_;
};

std::unique_ptr<MemorySpaces> MemorySpaceTest::spaces_;

// Ranges at odd offsets and odd lengths (partial last words, unaligned starts), with a gap. The
// keys' low bits give the trained pattern fp32 exp_avg_sq (11), other formats (12, 13) and bf16
// weights (4).
const std::vector<PatternRange> kRanges{
    {0, 4096, 11}, {4096, 1, 12}, {4099, 1021, 13}, {6000, 70001, 4}};
constexpr std::uint64_t kBufferBytes = 80000;

std::vector<std::byte> host_expected(DataPattern pattern) {
  std::vector<std::byte> expected(kBufferBytes);
  for (const PatternRange& r : kRanges)
    fill_pattern(expected.data() + r.offset, r.bytes, pattern, r.key);
  return expected;
}

std::vector<std::byte> contents(const Buffer& buffer) {
  std::vector<std::byte> out(buffer.size());
  buffer.copy_to_host(0, out);
  return out;
}

TEST_P(MemorySpaceTest, FillIsByteIdenticalToTheHostPattern) {
  if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  MemorySpace* s = &space();
  for (DataPattern pattern :
       {DataPattern::random, DataPattern::bf16, DataPattern::zeros, DataPattern::trained}) {
    const auto buffer = s->allocate(kBufferBytes);
    ASSERT_EQ(buffer->size(), kBufferBytes);
    buffer->fill(kRanges, pattern);
    EXPECT_EQ(contents(*buffer), host_expected(pattern)) << "pattern " << static_cast<int>(pattern);
    EXPECT_FALSE(buffer->first_mismatch(kRanges, pattern).has_value());
  }
}

TEST_P(MemorySpaceTest, AllocationIsZeroedAndZeroClears) {
  if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  MemorySpace* s = &space();
  const auto buffer = s->allocate(kBufferBytes);
  const std::vector<std::byte> zeros(kBufferBytes);
  EXPECT_EQ(contents(*buffer), zeros);
  buffer->fill(kRanges, DataPattern::random);
  buffer->zero();
  EXPECT_EQ(contents(*buffer), zeros);
}

TEST_P(MemorySpaceTest, CorruptedByteIsFoundAtTheHostsOffset) {
  if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  MemorySpace* s = &space();
  const auto buffer = s->allocate(kBufferBytes);
  buffer->fill(kRanges, DataPattern::bf16);
  // Flip one byte in the middle of the last range and one later (the first must win), and one
  // in the partial last word of the third range.
  for (const std::uint64_t at : {std::uint64_t{6000 + 33333}, std::uint64_t{4099 + 1020}}) {
    std::vector<std::byte> bytes = host_expected(DataPattern::bf16);
    std::byte flipped = bytes[at] ^ std::byte{0x5a};
    buffer->copy_from_host(at, {&flipped, 1});
    bytes[at] = flipped;
    std::byte later = bytes[6000 + 50000] ^ std::byte{1};
    buffer->copy_from_host(6000 + 50000, {&later, 1});
    bytes[6000 + 50000] = later;

    const auto found = buffer->first_mismatch(kRanges, DataPattern::bf16);
    ASSERT_TRUE(found.has_value());
    const PatternRange& r = kRanges[found->range];
    const auto host = first_mismatch(bytes.data() + r.offset, r.bytes, DataPattern::bf16, r.key);
    ASSERT_TRUE(host.has_value());
    EXPECT_EQ(found->offset, *host);
    EXPECT_EQ(r.offset + found->offset, at);
    EXPECT_EQ(found->found, static_cast<std::uint8_t>(flipped));
    buffer->fill(kRanges, DataPattern::bf16);
  }
}

TEST_P(MemorySpaceTest, ChecksumsMatchTheHostChecksum) {
  if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  MemorySpace* s = &space();
  const auto buffer = s->allocate(kBufferBytes);
  buffer->fill(kRanges, DataPattern::random);
  const std::vector<std::byte> expected = host_expected(DataPattern::random);
  const std::vector<std::uint64_t> sums = buffer->checksums(kRanges);
  ASSERT_EQ(sums.size(), kRanges.size());
  for (std::size_t i = 0; i < kRanges.size(); ++i) {
    EXPECT_EQ(sums[i], checksum64(expected.data() + kRanges[i].offset, kRanges[i].bytes))
        << "range " << i;
  }
}

TEST_P(MemorySpaceTest, ViewKindAndAlignment) {
  if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  MemorySpace* s = &space();
  const auto buffer = s->allocate(12345);
  const backends::MemoryView view = buffer->view();
  EXPECT_EQ(view.size, 12345u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(view.data) % 4096, 0u)
      << "O_DIRECT needs page-aligned memory";
  switch (GetParam()) {
    case MemorySpaceKind::host:
    case MemorySpaceKind::kokkos:
      EXPECT_EQ(view.kind, backends::MemoryKind::host);
      EXPECT_EQ(buffer->copier(4096, 2), nullptr);
      break;
    case MemorySpaceKind::pinned:
      EXPECT_EQ(view.kind, backends::MemoryKind::pinned);
      EXPECT_EQ(buffer->copier(4096, 2), nullptr);
      break;
    case MemorySpaceKind::cuda:
      EXPECT_EQ(view.kind, backends::MemoryKind::device);
      EXPECT_NE(buffer->copier(4096, 2), nullptr);
      break;
  }
}

TEST_P(MemorySpaceTest, RangesOutsideTheBufferAreRejected) {
  if (const std::string why = missing(); !why.empty()) GTEST_SKIP() << why;
  MemorySpace* s = &space();
  const auto buffer = s->allocate(100);
  const std::vector<PatternRange> outside{{96, 5, 1}};
  EXPECT_THROW(buffer->fill(outside, DataPattern::random), std::out_of_range);
  EXPECT_THROW((void)buffer->first_mismatch(outside, DataPattern::random), std::out_of_range);
}

INSTANTIATE_TEST_SUITE_P(Spaces, MemorySpaceTest,
                         ::testing::Values(MemorySpaceKind::host, MemorySpaceKind::pinned,
                                           MemorySpaceKind::kokkos, MemorySpaceKind::cuda),
                         [](const auto& param_info) {
                           return std::string(memory_space_name(param_info.param));
                         });

TEST(MemorySpaceNames, RoundTrip) {
  for (MemorySpaceKind kind : {MemorySpaceKind::host, MemorySpaceKind::pinned,
                               MemorySpaceKind::cuda, MemorySpaceKind::kokkos}) {
    EXPECT_EQ(parse_memory_space(memory_space_name(kind)), kind);
  }
  EXPECT_FALSE(parse_memory_space("device").has_value());
}

// Locked memory of this process, from /proc/self/status (kB), or -1.
// ASan intercepts mlock and does nothing (VmLck stays 0), so the locked amount is checked
// only without it.
// (gcc says so with __SANITIZE_ADDRESS__, clang with __has_feature).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMlockLocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMlockLocks = false;
#else
constexpr bool kMlockLocks = true;
#endif
#else
constexpr bool kMlockLocks = true;
#endif

long locked_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmLck:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

TEST(PinnedMemory, WithoutAGpuFallsBackToMlockAndSaysSo) {
  MemorySpaces spaces;
  if (!spaces.unavailable(MemorySpaceKind::cuda))
    GTEST_SKIP() << "a CUDA device is present: pinned uses cudaMallocHost";
  MemorySpace& pinned = spaces.get(MemorySpaceKind::pinned);
  const long before = locked_kib();
  const auto buffer = pinned.allocate(std::uint64_t{8} << 20);
  const std::vector<std::string> notes = pinned.notes();
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("memory.space = \"pinned\""), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("mlock instead of cudaMallocHost"), std::string::npos) << notes[0];
  const bool locked = notes.size() == 1;  // a second note says mlock failed (RLIMIT_MEMLOCK)
  if (locked && before >= 0 && kMlockLocks) {
    EXPECT_GE(locked_kib() - before, 8 * 1024);
  }
  EXPECT_EQ(buffer->view().kind, backends::MemoryKind::pinned);
}

TEST(CudaSpace, WithoutADeviceSaysWhyUpFront) {
  MemorySpaces spaces;
  const auto why = spaces.unavailable(MemorySpaceKind::cuda);
  if (!why) GTEST_SKIP() << "a CUDA device is present";
  std::printf("memory.space = \"cuda\" here: %s\n", why->c_str());
  EXPECT_TRUE(why->starts_with("no CUDA device (cudaGetDeviceCount: error ") ||
              why->starts_with("this build has no CUDA"))
      << *why;
  try {
    spaces.get(MemorySpaceKind::cuda);
    ADD_FAILURE() << "get(cuda) succeeded without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "memory.space = \"cuda\": " + *why);
  }
}

}  // namespace
}  // namespace ckpt::harness
