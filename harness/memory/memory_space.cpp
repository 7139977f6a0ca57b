#include "harness/memory/memory_space.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace ckpt::harness {

std::string_view memory_space_name(MemorySpaceKind kind) {
  switch (kind) {
    case MemorySpaceKind::host:
      return "host";
    case MemorySpaceKind::pinned:
      return "pinned";
    case MemorySpaceKind::cuda:
      return "cuda";
    case MemorySpaceKind::kokkos:
      return "kokkos";
  }
  return "host";
}

std::optional<MemorySpaceKind> parse_memory_space(std::string_view name) {
  constexpr std::array kAll{MemorySpaceKind::host, MemorySpaceKind::pinned, MemorySpaceKind::cuda,
                            MemorySpaceKind::kokkos};
  for (const MemorySpaceKind kind : kAll) {
    if (memory_space_name(kind) == name) return kind;
  }
  return std::nullopt;
}

std::unique_ptr<DeviceCopier> Buffer::copier(std::uint64_t /*slot_bytes*/, int /*slots*/) const {
  return nullptr;
}

void check_ranges(std::span<const PatternRange> ranges, std::uint64_t size) {
  for (const PatternRange& r : ranges) {
    if (r.offset > size || r.bytes > size - r.offset) {
      throw std::out_of_range(fmt::format("pattern range [{}, {}) lies outside the {}-byte buffer",
                                          r.offset, r.offset + r.bytes, size));
    }
  }
}

}  // namespace ckpt::harness
