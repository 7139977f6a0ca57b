#pragma once

// [load]'s loader settings (load.method, threads, direct, chunk_bytes, pool_bytes) and their one
// declaration of defaults; the loader (load_files) runs them.

#include <cstdint>
#include <optional>
#include <string_view>

namespace ckpt::harness {

enum class LoadMethod { pipelined, mmap, read };

std::string_view load_method_name(LoadMethod method);
std::optional<LoadMethod> parse_load_method(std::string_view name);

// Defaults as ServerlessLLM's loader: 4 threads, 32 MiB chunks, a 4 GiB pool. The one declaration
// of these defaults: `ckptbench load`'s options and the campaign's load.* keys take them from here.
inline constexpr int kMaxLoadThreads =
    1024;  // the most reader threads load.threads / --threads takes

struct LoadSettings {
  LoadMethod method = LoadMethod::pipelined;
  int threads = 4;
  bool direct = false;
  std::uint64_t chunk_bytes = std::uint64_t{32} << 20;
  std::uint64_t pool_bytes = std::uint64_t{4} << 30;
};

}  // namespace ckpt::harness
