// A checkpoint's ckptbench-manifest.json, as restore and `ckptbench load` read it: bounded
// parsing and the typed checks of every field, then each tensor's shard as the read paths
// rebuild it. A manifest refused with its message (std::runtime_error) is the documented outcome.
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
    nlohmann::json manifest;
    try {
      manifest = parse_manifest(text, "fuzz/ckptbench-manifest.json");
    } catch (const std::runtime_error&) {
      return;  // refused, naming the file and the key
    }
    for (const nlohmann::json& t : manifest.at("tensors")) shard_from_json(t);
    (void)manifest.dump();
  });
}
