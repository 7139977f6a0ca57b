// PickleBytes against the bytes Python's pickler (protocol 2) writes: len(pickle.dumps(v, 2))
// less the PROTO opcode and STOP.
#include "harness/formats/pickle_bytes.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <utility>

namespace ckpt::harness {
namespace {

TEST(PickleBytes, IntsTakeAsManyBytesAsPythonsPickler) {
  const std::pair<std::int64_t, std::uint64_t> expected[] = {
      {0, 2},          {255, 2},        {256, 3},        {65535, 3},        {65536, 5},
      {2147483647, 5}, {2147483648, 7}, {4294967295, 7}, {549755813888, 8}, {1099511627776, 8}};
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

// The bytes beyond the first batch's MARK and closing opcode that pickle.dumps(x, 2) writes for
// a list [0] * n and an OrderedDict of n items.
TEST(PickleBytes, LongListsAndOrderedDictsAreBatchedAsPythonsPicklerBatchesThem) {
  const std::tuple<std::size_t, std::uint64_t, std::uint64_t> expected[] = {
      {2, 0, 0}, {999, 0, 0}, {1000, 0, 0}, {1001, 2, 1}, {1002, 2, 2}, {2000, 2, 2}, {2001, 4, 3}};
  for (const auto& [items, list, ordered_dict] : expected) {
    PickleBytes l(0), d(0);
    l.list_batches(items);
    d.ordered_dict_batches(items);
    EXPECT_EQ(l.bytes(), list) << items;
    EXPECT_EQ(d.bytes(), ordered_dict) << items;
  }
}

}  // namespace
}  // namespace ckpt::harness
