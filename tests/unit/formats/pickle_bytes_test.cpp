// PickleBytes against the bytes Python's pickler (protocol 2) writes: len(pickle.dumps(v, 2))
// less the PROTO opcode and STOP.
#include "harness/formats/pickle_bytes.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace ckpt::harness {
namespace {

TEST(PickleBytes, IntsTakeAsManyBytesAsPythonsPickler) {
  const std::pair<std::int64_t, std::uint64_t> expected[] = {
      {0, 2},          {255, 2},         {256, 3},          {65535, 3},
      {65536, 5},      {2147483647, 5},  {2147483648, 7},   {4294967295, 7},
      {549755813888, 8}, {1099511627776, 8}};
  for (const auto& [value, bytes] : expected) {
    PickleBytes p(0);
    p.integer(value);
    EXPECT_EQ(p.bytes(), bytes) << value;
  }
}

// A memo put or get takes 2 bytes up to index 255 and 5 above; a string is BINUNICODE.
TEST(PickleBytes, MemoReferencesGrowPastIndex255) {
  PickleBytes p(0);
  p.text("abc");
  p.put();
  EXPECT_EQ(p.bytes(), 10u);  // pickle.dumps("abc", 2): BINUNICODE, BINPUT
  p.put(255);
  EXPECT_EQ(p.next_index(), 256u);
  EXPECT_EQ(p.bytes(), 10u + 255 * 2);
  p.put();
  p.get(255);
  p.get(256);
  EXPECT_EQ(p.bytes(), 10u + 255 * 2 + 5 + 2 + 5);
  const PickleBytes after_args(100, 300);  // fixed bytes that hold 300 memo entries
  EXPECT_EQ(after_args.next_index(), 300u);
}

TEST(PickleBytes, ADictOfMoreThanAThousandItemsIsBatched) {
  PickleBytes p(0);
  p.batches(1000);
  EXPECT_EQ(p.bytes(), 0u);
  p.batches(1002);
  EXPECT_EQ(p.bytes(), 2u);  // one more MARK and SETITEMS around the last two
}

}  // namespace
}  // namespace ckpt::harness
