// A Hugging Face config.json, as `--model config.json` reads it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "harness/models/model_file.hpp"
#include "tests/fuzz/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  return ckpt::fuzz::run_one([&] { ckpt::harness::parse_model_hf_json(text, "config.json"); });
}
