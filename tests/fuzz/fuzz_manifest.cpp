// A checkpoint's ckptbench-manifest.json, as restore and `ckptbench load` read it: bounded
// parsing and the typed reading of every field, then the manifest written back. A manifest refused
// with its message (std::runtime_error) is the documented outcome.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "harness/checkpoint/manifest.hpp"
#include "tests/fuzz/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ckpt::harness;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  return ckpt::fuzz::run_one([&] {
    Manifest manifest;
    try {
      manifest = parse_manifest(text, "fuzz/ckptbench-manifest.json");
    } catch (const std::runtime_error&) {
      return;  // refused, naming the file and the key
    }
    (void)manifest_json(manifest).dump();
  });
}
