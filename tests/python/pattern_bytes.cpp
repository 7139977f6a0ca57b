// Prints the bytes fill_pattern writes, for checks outside C++ (safetensors_check.py):
//   ckpt_pattern_bytes PATTERN DATA_KEY OFFSET COUNT   ->  COUNT bytes as hex, one line
// PATTERN is a data.pattern value ("random", "bf16", "zeros"); DATA_KEY a manifest's data_key.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "harness/memory/data_pattern.hpp"

int main(int argc, char** argv) {
  using ckpt::harness::DataPattern;
  if (argc != 5) {
    std::fprintf(stderr, "usage: ckpt_pattern_bytes PATTERN DATA_KEY OFFSET COUNT\n");
    return 2;
  }
  const std::string_view name = argv[1];
  const DataPattern pattern = name == "bf16" ? DataPattern::bf16 : name == "zeros" ? DataPattern::zeros : DataPattern::random;
  if (name != "bf16" && name != "zeros" && name != "random") {
    std::fprintf(stderr, "ckpt_pattern_bytes: unknown pattern \"%s\" (random, bf16, zeros)\n", argv[1]);
    return 2;
  }
  const std::uint64_t key = std::strtoull(argv[2], nullptr, 10);
  const std::uint64_t offset = std::strtoull(argv[3], nullptr, 10);
  const std::uint64_t count = std::strtoull(argv[4], nullptr, 10);
  for (std::uint64_t i = 0; i < count; ++i) std::printf("%02x", ckpt::harness::expected_byte(pattern, key, offset + i));
  std::printf("\n");
  return 0;
}
