#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

namespace ckpt::harness {

// Counts the bytes of a pickle (protocol 2) as Python's pickler writes it, for the sizes of
// torch.save's data.pkl: a non-negative int in 2, 3 or 5 bytes (BININT1, BININT2, BININT) or
// from 2^31 as LONG1 (its length byte and two's-complement bytes), a string as
// BINUNICODE, and each memo put or get of a memoized object in 2 bytes (BINPUT, BINGET) up to memo
// index 255 and in 5 (LONG_BINPUT, LONG_BINGET) above; a long dict or list in batches.
class PickleBytes {
 public:
  // `fixed` bytes counted by the caller, which hold `memo_entries` memo puts.
  explicit PickleBytes(std::uint64_t fixed, std::uint64_t memo_entries = 0)
      : bytes_(fixed), memo_(memo_entries) {}
  void add(std::uint64_t bytes) { bytes_ += bytes; }
  void integer(std::int64_t value) {
    if (value < (std::int64_t{1} << 31)) {
      bytes_ += value < 256 ? 2 : value < 65536 ? 3 : 5;
    } else {
      bytes_ +=
          2 + static_cast<std::uint64_t>(std::bit_width(static_cast<std::uint64_t>(value))) / 8 + 1;
    }
  }
  void text(std::string_view s) { bytes_ += 5 + s.size(); }
  void put(int count = 1) {
    for (int i = 0; i < count; ++i) bytes_ += memo_++ < 256 ? 2 : 5;
  }
  void get(std::uint64_t index) { bytes_ += index < 256 ? 2 : 5; }
  std::uint64_t next_index() const { return memo_; }
  // The batches beyond the first of a list of `items` (1000 items each, a MARK and an APPENDS),
  // and of an OrderedDict, such as a module's state dict (the same, but a last batch of one item
  // is a lone SETITEM).
  void list_batches(std::size_t items) { bytes_ += items > 1 ? 2 * ((items - 1) / 1000) : 0; }
  void ordered_dict_batches(std::size_t items) {
    list_batches(items);
    if (items > 1000 && items % 1000 == 1) bytes_ -= 1;
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t bytes_;
  std::uint64_t memo_;
};

}  // namespace ckpt::harness
