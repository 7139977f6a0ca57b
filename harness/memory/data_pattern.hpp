#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "harness/memory/data_pattern_kind.hpp"

namespace ckpt::harness {

// Deterministic shard contents: byte i of a shard depends only on (pattern, key, i), so any
// process can regenerate what another wrote. random: uniform bytes (incompressible); bf16:
// bf16 values spread like trained weights (sign, small exponents, random mantissa), so
// compressing or deduplicating storage sees realistic entropy; zeros: all zero. The words
// come from pattern_words.hpp, which device kernels share.
void fill_pattern(std::byte* data, std::uint64_t bytes, DataPattern pattern, std::uint64_t key);

// Offset of the first byte that differs from what fill_pattern writes, or nullopt.
std::optional<std::uint64_t> first_mismatch(const std::byte* data, std::uint64_t bytes, DataPattern pattern,
                                            std::uint64_t key);

// The byte fill_pattern writes at `offset` (for error messages).
std::uint8_t expected_byte(DataPattern pattern, std::uint64_t key, std::uint64_t offset);

}  // namespace ckpt::harness
