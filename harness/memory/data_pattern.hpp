#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "harness/memory/data_pattern_kind.hpp"

namespace ckpt::harness {

// Deterministic tensor contents: global byte g of a tensor depends only on (pattern, key, g), the
// key naming the tensor (seed, state, name; tensor_data_key). A run of a shard that is contiguous
// in the tensor's global row-major bytes starts at `global_offset`, so a shard of any slicing,
// written under one parallelism, is regenerated and verified under another. random: uniform bytes
// (incompressible); bf16: bf16 values spread like trained weights (sign, small exponents, random
// mantissa), so compressing or deduplicating storage sees realistic entropy; zeros: all zero. The
// words come from pattern::pattern_word, which device kernels share. `global_offset` 0 gives the
// contents of a whole tensor, or of a run whose place nobody else needs (tests, benchmarks).
void fill_pattern(std::byte* data, std::uint64_t bytes, DataPattern pattern, std::uint64_t key,
                  std::uint64_t global_offset = 0);

// Offset (from `data`) of the first byte that differs from what fill_pattern writes, or nullopt.
std::optional<std::uint64_t> first_mismatch(const std::byte* data, std::uint64_t bytes,
                                            DataPattern pattern, std::uint64_t key,
                                            std::uint64_t global_offset = 0);

// The byte fill_pattern writes at global byte `offset` of the tensor (for error messages).
std::uint8_t expected_byte(DataPattern pattern, std::uint64_t key, std::uint64_t offset);

}  // namespace ckpt::harness
