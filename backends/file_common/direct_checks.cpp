#include "backends/file_common/direct_checks.hpp"

#include <stdexcept>
#include <string>

namespace ckpt::backends::file_common {
namespace {

bool is_power_of_two(std::uint64_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

[[noreturn]] void throw_misaligned(std::string_view backend, const std::string& path,
                                   const Extent& extent, const std::string& problem,
                                   std::uint64_t alignment) {
  throw std::invalid_argument(
      std::string(backend) + ": O_DIRECT extent of " + path + " at file offset " +
      std::to_string(extent.file_offset) + ", length " + std::to_string(extent.length) + ": " +
      problem + " is not aligned to `direct_alignment` = " + std::to_string(alignment) +
      " bytes; align the plan and buffer, or set `direct = false`");
}

}  // namespace

void validate_direct_alignment(std::string_view backend, const IoSettings& settings) {
  const std::uint64_t alignment = settings.direct_alignment;
  if (settings.direct &&
      (!is_power_of_two(alignment) || alignment < 512 || alignment > (1u << 30))) {
    throw std::invalid_argument(
        std::string(backend) +
        ": `direct_alignment` must be a power of two from 512 to 1 GiB (got " +
        std::to_string(alignment) + ")");
  }
}

void check_direct_plan(std::string_view backend, const IoPlan& plan, std::uint64_t alignment) {
  for (const FilePlan& file : plan.files) {
    for (const Extent& e : file.extents) {
      if (e.length == 0) continue;  // moves nothing
      if (e.file_offset % alignment != 0)
        throw_misaligned(backend, file.path, e, "the file offset", alignment);
      if (e.length % alignment != 0)
        throw_misaligned(backend, file.path, e, "the length", alignment);
    }
  }
}

void check_direct_memory(std::string_view backend, const IoPlan& plan, const MemoryView& memory,
                         const IoSettings& settings) {
  if (!settings.direct) return;
  const std::uint64_t alignment = settings.direct_alignment;
  for (const FilePlan& file : plan.files) {
    for (const Extent& e : file.extents) {
      if (e.length == 0) continue;
      const auto address = reinterpret_cast<std::uintptr_t>(memory.data + e.memory_offset);
      if (address % alignment != 0) {
        throw_misaligned(backend, file.path, e,
                         "the memory address (buffer + memory_offset " +
                             std::to_string(e.memory_offset) + ", " +
                             std::to_string(address % alignment) + " bytes past a boundary)",
                         alignment);
      }
    }
  }
}

}  // namespace ckpt::backends::file_common
