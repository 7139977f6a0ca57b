// A safetensors file, as read_safetensors_header reads one: the input is the whole file.
#include <cstddef>
#include <cstdint>
#include <span>

#include "harness/formats/safetensors_header.hpp"
#include "tests/fuzz/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  return ckpt::fuzz::run_one([&] {
    try {
      ckpt::harness::parse_safetensors_header(file, size, "fuzz.safetensors");
    } catch (const ckpt::harness::SafetensorsError&) {
      // the documented error of a bad file
    }
  });
}
