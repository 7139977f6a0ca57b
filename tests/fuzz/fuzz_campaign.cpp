// Campaign text plus command-line overrides through parse_campaign, as `ckptbench run
// FILE --set KEY=VALUE ...` does. Input: the TOML text; after a line "#--set", one override
// ("dotted.key=value") per line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/campaign/campaign.hpp"
#include "tests/fuzz/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kMarker = "#--set\n";
  std::string_view text = input;
  std::vector<std::string> overrides;
  if (const auto at = input.find(kMarker); at != std::string_view::npos) {
    text = input.substr(0, at);
    std::string_view rest = input.substr(at + kMarker.size());
    while (!rest.empty()) {
      const auto end = rest.find('\n');
      overrides.emplace_back(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    }
  }
  return ckpt::fuzz::run_one([&] { ckpt::harness::parse_campaign(text, "fuzz.toml", overrides); });
}
